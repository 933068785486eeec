// Package config reads corral-ctld's configuration file: partitions, one
// per line, in Slurm's slurm.conf syntax so admins feel at home:
//
//	# name, nodes, limits
//	PartitionName=gpu Nodes=node[1-4],big01 Default=YES DefaultTime=1:00:00 MaxTime=7-00:00:00 DefMemPerCPU=2G
//	PartitionName=debug Nodes=ALL MaxTime=30
//
// It also owns the two unit parsers the file needs: Slurm times
// (ParseTime) and memory sizes (ParseSize). Parsing is pure; every error
// names the file and line.
package config
