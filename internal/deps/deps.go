//go:build tools

package deps

import (
	_ "github.com/NVIDIA/go-nvml/pkg/nvml"
	_ "github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	_ "github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	_ "github.com/google/go-containerregistry/pkg/crane"
	_ "github.com/google/go-containerregistry/pkg/registry"
	_ "github.com/google/go-containerregistry/pkg/v1/layout"
	_ "github.com/google/go-containerregistry/pkg/v1/mutate"
	_ "github.com/google/go-containerregistry/pkg/v1/tarball"
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/opencontainers/cgroups"
	_ "github.com/opencontainers/runc/libcontainer"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/urfave/cli/v2"
	_ "go.etcd.io/bbolt"
	_ "golang.org/x/sys/unix"
	_ "tags.cncf.io/container-device-interface/pkg/cdi"
)
