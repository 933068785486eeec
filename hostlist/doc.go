// Package hostlist reads and writes Slurm hostlist expressions such as
// "node[1-4,7],gpu01": Expand turns an expression into node names and
// Compress turns names back into the shortest such expression.
//
// Ranges keep their zero padding ("n[01-10]" is n01..n10), several bracket
// groups in one name multiply out ("r[1-2]n[1-2]" is r1n1 r1n2 r2n1 r2n2),
// and Sort orders names the way people expect (node2 before node10).
// CompressCounts writes per-node counts as Slurm does ("2(x2),1").
package hostlist
