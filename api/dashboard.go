package api

import (
	"context"
	"net/http"
)

// DashboardLogin is POST /v1/dashboard/login: a one-time link that signs
// the caller in to the controller's dashboard, valid for a minute.
type DashboardLogin struct {
	URL string `json:"url"`
}

// DashboardLogout is POST /v1/dashboard/logout-all: how many of the
// caller's dashboard sessions it ended.
type DashboardLogout struct {
	Sessions int `json:"sessions"`
}

// DashboardLogin asks for a login link for the caller.
func (c *Client) DashboardLogin(ctx context.Context) (*DashboardLogin, error) {
	var out DashboardLogin
	if err := c.Do(ctx, http.MethodPost, "/v1/dashboard/login", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DashboardLogoutAll ends the caller's dashboard sessions.
func (c *Client) DashboardLogoutAll(ctx context.Context) (*DashboardLogout, error) {
	var out DashboardLogout
	if err := c.Do(ctx, http.MethodPost, "/v1/dashboard/logout-all", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
