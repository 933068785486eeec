// Package pmi is the process-management interface corral's step runner
// serves to the tasks of an `srun --mpi=pmi2` step, so that MPI programs
// started directly by srun find each other: the "simple" PMI wire
// protocol that MPICH's client speaks over the file descriptor named by
// PMI_FD, version 1 (MPICH's default, `cmd=init pmi_version=1`) and
// version 2 (`cmd=init pmi_version=2`, then length-prefixed commands).
//
// The package holds no I/O of its own besides the one connection it is
// given per rank:
//
//   - wire.go parses and formats both versions' messages;
//   - server.go is one node's server: the job's attributes, the key-value
//     store, the node's puts since the last fence and the fence state
//     machine, and Serve, which answers one rank's commands;
//   - fence.go is the hub's side (srun): the merge of every node's puts
//     for one fence sequence;
//   - mapping.go is PMI_process_mapping, the ranks' placement over nodes.
//
// The one operation that needs the other nodes is the fence (PMI-1's
// barrier_in, PMI-2's kvs-fence): once every local rank entered it the
// server hands the node's puts to Server.Fence (the runner sends them to
// srun), and Server.FenceDone (srun's merged answer) lets the ranks out.
// Everything else is answered on the node.
package pmi
