package store

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestUsageRoundTripsAcrossReopen(t *testing.T) {
	s := MustOpen(t, "")
	if rec, err := s.Usage(); err != nil || rec != nil {
		t.Fatalf("fresh store: Usage() = %+v, %v; want nil, nil", rec, err)
	}
	at := time.Date(2030, 1, 2, 3, 4, 5, 6, time.UTC)
	first := &UsageRecord{ValidTo: at, Ledger: json.RawMessage(`{"version":1,"usage":[]}`),
		Released: map[uint64]time.Time{7: at.Add(-time.Minute)}, Blocked: []uint64{9}}
	if err := s.PutUsage(first); err != nil {
		t.Fatal(err)
	}
	second := &UsageRecord{ValidTo: at.Add(time.Second), Ledger: json.RawMessage(`{"version":1,"usage":[{"user":"a","value":1,"at":"2030-01-02T03:04:06Z"}]}`)}
	if err := s.PutUsage(second); err != nil {
		t.Fatal(err)
	}
	s = MustReopen(t, s)
	defer s.Close()
	got, err := s.Usage()
	if err != nil {
		t.Fatal(err)
	}
	// The second save replaced the first entirely.
	if !got.ValidTo.Equal(second.ValidTo) || string(got.Ledger) != string(second.Ledger) || got.Released != nil || got.Blocked != nil {
		t.Fatalf("after reopen: %+v, want %+v", got, second)
	}
	if err := s.PutUsage(first); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Usage()
	if !reflect.DeepEqual(got.Released, first.Released) || !reflect.DeepEqual(got.Blocked, first.Blocked) {
		t.Fatalf("eligibility: %+v, want %+v", got, first)
	}
}

func TestPutUsageRefusesIncompleteRecords(t *testing.T) {
	s := MustOpen(t, "")
	defer s.Close()
	for _, rec := range []*UsageRecord{
		{Ledger: json.RawMessage(`{}`)},
		{ValidTo: time.Now()},
	} {
		if err := s.PutUsage(rec); err == nil {
			t.Errorf("PutUsage(%+v) accepted", rec)
		}
	}
	if rec, _ := s.Usage(); rec != nil {
		t.Errorf("a refused record was stored: %+v", rec)
	}
}
