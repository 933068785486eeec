module github.com/corral-hpc/corral

go 1.26.0

require (
	github.com/NVIDIA/go-nvml v0.13.3-1
	github.com/chromedp/chromedp v0.23.0
	github.com/coder/websocket v1.8.15
	github.com/cpuguy83/go-md2man/v2 v2.0.7
	github.com/cyphar/filepath-securejoin v0.7.0
	github.com/google/go-containerregistry v0.22.1
	github.com/mattn/go-runewidth v0.0.19
	github.com/opencontainers/cgroups v0.1.0
	github.com/opencontainers/runc v1.5.2
	github.com/opencontainers/runtime-spec v1.3.0
	github.com/prometheus/client_golang v1.25.0
	github.com/urfave/cli/v2 v2.27.7
	go.etcd.io/bbolt v1.4.3
	golang.org/x/sys v0.49.0
	tags.cncf.io/container-device-interface v1.1.1
)

require (
	cyphar.com/go-pathrs v0.2.6 // indirect
	github.com/BurntSushi/toml v1.5.0 // indirect
	github.com/aperturerobotics/protobuf-go-lite v0.14.0 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/checkpoint-restore/go-criu/v8 v8.3.0 // indirect
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/cilium/ebpf v0.17.3 // indirect
	github.com/clipperhouse/uax29/v2 v2.6.0 // indirect
	github.com/containerd/console v1.0.5 // indirect
	github.com/coreos/go-systemd/v22 v22.7.0 // indirect
	github.com/docker/cli v29.7.2+incompatible // indirect
	github.com/docker/docker-credential-helpers v0.9.3 // indirect
	github.com/fsnotify/fsnotify v1.7.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/godbus/dbus/v5 v5.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.1 // indirect
	github.com/moby/sys/capability v0.4.0 // indirect
	github.com/moby/sys/mountinfo v0.7.2 // indirect
	github.com/moby/sys/user v0.4.0 // indirect
	github.com/moby/sys/userns v0.2.1 // indirect
	github.com/mrunalp/fileutils v0.5.1 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/opencontainers/selinux v1.13.1 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/seccomp/libseccomp-golang v0.12.0 // indirect
	github.com/sirupsen/logrus v1.9.4 // indirect
	github.com/vishvananda/netlink v1.3.1 // indirect
	github.com/vishvananda/netns v0.0.5 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/exp/typeparams v0.0.0-20231108232855-2478ac86f678 // indirect
	golang.org/x/mod v0.39.0 // indirect
	golang.org/x/net v0.59.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/tools v0.49.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gotest.tools/v3 v3.5.2 // indirect
	honnef.co/go/tools v0.7.0 // indirect
	tags.cncf.io/container-device-interface/specs-go v1.1.1 // indirect
)

tool honnef.co/go/tools/cmd/staticcheck
