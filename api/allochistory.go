package api

import (
	"context"
	"net/http"
)

// AllocationHistory fetches the controller's recent allocation samples
// (administrators only).
func (c *Client) AllocationHistory(ctx context.Context) (*AllocHistory, error) {
	var out AllocHistory
	if err := c.Do(ctx, http.MethodGet, "/v1/admin/allocation", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
