"""A training script for torchrun-standin: checks the environment torchrun
gives a worker, then all ranks meet at MASTER_ADDR:MASTER_PORT as
torch.distributed's TCP store does (rank 0 listens, the others connect),
rank 0 checks that every rank came once and tells them all the set."""
import os
import socket
import sys
import time


def env_int(name):
    v = os.environ.get(name)
    if v is None or not v.isdigit():
        sys.exit("worker: %s is %r, want a number" % (name, v))
    return int(v)


world, rank = env_int("WORLD_SIZE"), env_int("RANK")
local, local_world = env_int("LOCAL_RANK"), env_int("LOCAL_WORLD_SIZE")
addr, port = os.environ.get("MASTER_ADDR", ""), env_int("MASTER_PORT")
if not addr or not (0 <= rank < world) or not (0 <= local < local_world) or world % local_world:
    sys.exit("worker: inconsistent environment MASTER_ADDR=%r RANK=%d WORLD_SIZE=%d LOCAL_RANK=%d LOCAL_WORLD_SIZE=%d"
             % (addr, rank, world, local, local_world))
node = os.environ.get("SLURMD_NODENAME", "unknown")

if rank == 0:
    srv = socket.create_server((addr, port))
    conns, seen = [], [0]
    while len(conns) < world - 1:
        c, _ = srv.accept()
        seen.append(int(c.makefile().readline()))
        conns.append(c)
    met = sorted(seen)
    if met != list(range(world)):
        sys.exit("worker: ranks %s met, want 0-%d once each" % (met, world - 1))
    answer = " ".join(map(str, met))
    for c in conns:
        c.sendall((answer + "\n").encode())
        c.close()
else:
    deadline = time.monotonic() + 60
    while True:
        try:
            c = socket.create_connection((addr, port), timeout=60)
            break
        except OSError as e:
            if time.monotonic() > deadline:
                sys.exit("worker: rank %d cannot reach %s:%d: %s" % (rank, addr, port, e))
            time.sleep(0.1)
    c.sendall(("%d\n" % rank).encode())
    answer = c.makefile().readline().strip()
    if not answer:
        sys.exit("worker: rank 0 closed without the set of ranks")
# One write: the workers of a node share the agent's output, and print
# may write the line and its newline apart.
os.write(1, ("rank %d of %d local %d/%d on %s met %s\n" % (rank, world, local, local_world, node, answer)).encode())
