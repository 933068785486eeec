/* An MPI program for the launcher tests: every rank says where it runs
 * and the allreduce sum of all ranks. The test's nodes share one host and
 * launchers pass their own environment on to the ranks, so the node is
 * read from /tmp/node, which the job wrote in each node's private /tmp. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, sum = -1;
	char node[64] = "unknown";
	FILE *f;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	f = fopen("/tmp/node", "r");
	if (f) {
		if (fscanf(f, "%63s", node) != 1)
			strcpy(node, "unreadable");
		fclose(f);
	}
	printf("rank %d of %d on %s sum %d\n", rank, size, node, sum);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
