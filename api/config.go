package api

import (
	"context"
	"net/http"
	"time"
)

// ConfigEntry is one setting of the controller's configuration, under
// Slurm's name for it and in Slurm's spelling of its value
// (scontrol show config).
type ConfigEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ClusterConfig is GET /v1/config: the controller's settings that have a
// Slurm meaning, as loaded at Loaded (the controller's start).
type ClusterConfig struct {
	Loaded  time.Time     `json:"loaded"`
	Entries []ConfigEntry `json:"entries"`
}

// Config fetches the controller's configuration (any user may).
func (c *Client) Config(ctx context.Context) (*ClusterConfig, error) {
	var out ClusterConfig
	if err := c.Do(ctx, http.MethodGet, "/v1/config", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ResourceTemplate is an admin-defined preset of a session's resources
// (corral.conf's ResourceTemplate lines), GET /v1/templates; the
// dashboard's launch dialog offers them.
type ResourceTemplate struct {
	Name           string `json:"name"`
	CPUs           int    `json:"cpus"`
	MemBytes       int64  `json:"mem_bytes"`
	ShmBytes       int64  `json:"shm_bytes,omitempty"`
	FGPUHundredths int    `json:"fgpu_hundredths,omitempty"`
}

// Templates lists the resource templates (any user may).
func (c *Client) Templates(ctx context.Context) ([]ResourceTemplate, error) {
	out := []ResourceTemplate{}
	err := c.Do(ctx, http.MethodGet, "/v1/templates", nil, &out)
	return out, err
}
