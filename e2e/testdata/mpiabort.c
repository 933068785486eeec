/* An MPI program for the direct-launch abort test: rank 1 aborts the
 * job with exit code 7 while the others wait in a barrier it never
 * enters. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 1)
		MPI_Abort(MPI_COMM_WORLD, 7);
	printf("rank %d waits\n", rank);
	fflush(stdout);
	MPI_Barrier(MPI_COMM_WORLD);
	printf("rank %d passed a barrier rank 1 never entered\n", rank);
	MPI_Finalize();
	return 0;
}
