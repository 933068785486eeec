package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// This file holds the wire types and client calls of multifactor
// priority and fairshare: GET /v1/prio (corral prio, like sprio) and GET
// /v1/share (corral share, like sshare).

// PrioFactor is one term of a pending job's priority.
type PrioFactor struct {
	Value  float64 `json:"value"`  // the normalized factor, in [0, 1]
	Weight int64   `json:"weight"` // the configured weight
	Part   int64   `json:"part"`   // round(Value x Weight), what it adds
}

// PrioWeights are the configured weights of the priority factors.
type PrioWeights struct {
	Age       int64 `json:"age"`
	Fairshare int64 `json:"fairshare"`
	JobSize   int64 `json:"jobsize"`
}

// JobPrio is one pending job's priority and where it comes from.
type JobPrio struct {
	JobID uint64 `json:"job_id"`
	// Job names it as listings do: 123, 123_4, or 123_[4-15] for an
	// array's tasks that have not started.
	Job       string `json:"job"`
	Partition string `json:"partition"`
	User      string `json:"user"`
	Account   string `json:"account"`
	// Priority is the sum of the factors' parts less Nice: what the
	// planner orders pending jobs by (Job.Priority shows the same).
	Priority  int64      `json:"priority"`
	Nice      int        `json:"nice"`
	Age       PrioFactor `json:"age"`
	Fairshare PrioFactor `json:"fairshare"`
	JobSize   PrioFactor `json:"jobsize"`
}

// PrioResponse answers GET /v1/prio: every pending job matching the
// filter, in job ID order, and the weights.
type PrioResponse struct {
	Weights PrioWeights `json:"weights"`
	Jobs    []JobPrio   `json:"jobs"`
}

// PrioFilter selects jobs for GET /v1/prio (query: user, id; repeatable).
type PrioFilter struct {
	Users []string
	IDs   []uint64
}

// ShareRow is one line of the fairshare tree: an account (User empty) or
// a user's association with an account.
type ShareRow struct {
	Account string `json:"account"`
	User    string `json:"user,omitempty"`
	// Parent is the account above ("" for the root and accounts under
	// it); Depth is 0 for root, 1 under it, and so on.
	Parent string `json:"parent,omitempty"`
	Depth  int    `json:"depth"`
	// RawShares are the configured shares; NormShares the fraction of the
	// whole cluster they are worth (the product of the share fractions
	// from the root down).
	RawShares  float64 `json:"raw_shares"`
	NormShares float64 `json:"norm_shares"`
	// RawUsage is decayed usage in billing-seconds; EffectvUsage the
	// fraction of the whole cluster's usage it is.
	RawUsage     float64 `json:"raw_usage"`
	EffectvUsage float64 `json:"effective_usage"`
	// FairShare is the association's fairshare factor in [0, 1]; set for
	// users only.
	FairShare *float64 `json:"fairshare,omitempty"`
	// Default marks a user's default account (the one a job without -A
	// charges), for sacctmgr's DefaultAccount.
	Default bool `json:"default,omitempty"`
}

// ShareResponse answers GET /v1/share.
type ShareResponse struct {
	Algorithm string     `json:"algorithm"` // fair_tree or classic
	Time      time.Time  `json:"time"`      // the moment usage is decayed to
	Rows      []ShareRow `json:"rows"`      // depth first, the root first
	// DefaultAccount is the account of users no account lists.
	DefaultAccount string `json:"default_account,omitempty"`
}

// Prio lists pending jobs' priorities and their factors.
func (c *Client) Prio(ctx context.Context, f PrioFilter) (*PrioResponse, error) {
	q := url.Values{}
	for _, u := range f.Users {
		q.Add("user", u)
	}
	for _, id := range f.IDs {
		q.Add("id", strconv.FormatUint(id, 10))
	}
	path := "/v1/prio"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var resp PrioResponse
	if err := c.Do(ctx, http.MethodGet, path, nil, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Share returns the fairshare tree with usage and factors; users, if
// given, limits the user rows to them (accounts are always listed).
func (c *Client) Share(ctx context.Context, users []string) (*ShareResponse, error) {
	q := url.Values{}
	for _, u := range users {
		q.Add("user", u)
	}
	path := "/v1/share"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var resp ShareResponse
	if err := c.Do(ctx, http.MethodGet, path, nil, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
