// Package config reads corral-ctld's configuration file, in Slurm's
// slurm.conf syntax so admins feel at home: partitions, scheduling
// settings (multifactor priority, backfill) and the fairshare account
// tree, one KEY=VALUE line each (docs/scheduling.md lists every key):
//
//	# name, nodes, limits
//	PartitionName=gpu Nodes=node[1-4],big01 Default=YES DefaultTime=1:00:00 MaxTime=7-00:00:00 DefMemPerCPU=2G FGPUPerGPU=2
//	PartitionName=debug Nodes=ALL MaxTime=30
//	PriorityWeightFairshare=10000 PriorityWeightAge=1000 SchedulerType=backfill BackfillMode=easy
//	AccountName=physics Parent=root Fairshare=2
//	UserName=alice DefaultAccount=physics Accounts=physics,chem
//	KillOnInvalidDep=YES JobRequeue=0 MaxArrayTasks=100000 AcctRetention=30-0
//
// The last line is pipeline settings (pipeline.go): arrays,
// dependencies, requeue and the accounting history.
//
// It also owns the unit parsers the file needs: Slurm times (ParseTime),
// memory sizes (ParseSize) and TRES billing weights. Parsing is pure;
// every error names the file and line.
package config
