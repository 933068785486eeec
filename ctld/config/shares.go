package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/corral-hpc/corral/priority"
)

// The share tree is written as Slurm's sacctmgr would show it, one line
// per account and per user:
//
//	AccountName=physics Parent=root Fairshare=2
//	UserName=alice DefaultAccount=physics Accounts=physics,chem Fairshare=1
//
// Parent=root (the default) puts an account at the top. A user's jobs
// charge their -A account, else the DefaultAccount, else the first of
// Accounts. Users no line names are in the account called "default",
// which exists without a line.

// RootAccount is the share tree's root as Parent= names it.
const RootAccount = "root"

var (
	accountKeys = []string{"AccountName", "Parent", "Fairshare"}
	userKeys    = []string{"UserName", "DefaultAccount", "Accounts", "Fairshare"}
)

// shareLines collects account and user lines until the whole file is
// read: an account may be defined after the users in it.
type shareLines struct {
	accounts []priority.Account
	acctLine map[string]int
	users    []userLine
	userLine map[string]int
}

type userLine struct {
	name     string
	accounts []string // the default first
	shares   float64
	line     int
}

func (s *shareLines) addAccount(fields []string, lineNo int) error {
	kv, err := keyValues(fields, accountKeys)
	if err != nil {
		return err
	}
	a := priority.Account{Name: kv["AccountName"], Parent: kv["Parent"]}
	if err := checkName("AccountName", a.Name); err != nil {
		return err
	}
	if strings.EqualFold(a.Name, RootAccount) {
		return fmt.Errorf("AccountName=%s: root is the tree's root; name the accounts under it", a.Name)
	}
	if strings.EqualFold(a.Parent, RootAccount) {
		a.Parent = ""
	}
	if v, ok := kv["Fairshare"]; ok {
		if a.Shares, err = parseShares(v); err != nil {
			return err
		}
	}
	if prev, dup := s.acctLine[a.Name]; dup {
		return fmt.Errorf("account %s is already defined on line %d", a.Name, prev)
	}
	if s.acctLine == nil {
		s.acctLine = make(map[string]int)
	}
	s.acctLine[a.Name] = lineNo
	s.accounts = append(s.accounts, a)
	return nil
}

func (s *shareLines) addUser(fields []string, lineNo int) error {
	kv, err := keyValues(fields, userKeys)
	if err != nil {
		return err
	}
	u := userLine{name: kv["UserName"], line: lineNo}
	if err := checkName("UserName", u.name); err != nil {
		return err
	}
	if def := kv["DefaultAccount"]; def != "" {
		u.accounts = append(u.accounts, def)
	}
	if list, ok := kv["Accounts"]; ok {
		for _, a := range strings.Split(list, ",") {
			if a = strings.TrimSpace(a); a == "" {
				//lint:ignore ST1005 the line starts with the key, spelled as in corral.conf
				return fmt.Errorf("Accounts=%s: an account name is empty", list)
			}
			if !containsString(u.accounts, a) {
				u.accounts = append(u.accounts, a)
			}
		}
	}
	if len(u.accounts) == 0 {
		return fmt.Errorf("user %s: give DefaultAccount= or Accounts=", u.name)
	}
	if v, ok := kv["Fairshare"]; ok {
		if u.shares, err = parseShares(v); err != nil {
			return err
		}
	}
	if prev, dup := s.userLine[u.name]; dup {
		return fmt.Errorf("user %s is already defined on line %d", u.name, prev)
	}
	if s.userLine == nil {
		s.userLine = make(map[string]int)
	}
	s.userLine[u.name] = lineNo
	s.users = append(s.users, u)
	return nil
}

// apply checks references once the whole file is read and puts the tree
// into cfg.
func (s *shareLines) apply(cfg *priority.Config, source string) error {
	known := func(name string) bool {
		_, ok := s.acctLine[name]
		return ok || name == priority.DefaultAccountName
	}
	for _, a := range s.accounts {
		if a.Parent != "" && !known(a.Parent) {
			return fmt.Errorf("%s:%d: account %s: parent account %s is not defined (add an AccountName=%s line, or use Parent=root)",
				source, s.acctLine[a.Name], a.Name, a.Parent, a.Parent)
		}
	}
	cfg.Accounts = append([]priority.Account(nil), s.accounts...)
	cfg.Users = nil
	for _, u := range s.users {
		for _, a := range u.accounts {
			if !known(a) {
				return fmt.Errorf("%s:%d: user %s: account %s is not defined (add an AccountName=%s line)", source, u.line, u.name, a, a)
			}
			cfg.Users = append(cfg.Users, priority.User{Name: u.name, Account: a, Shares: u.shares})
		}
	}
	return nil
}

// keyValues reads KEY=VALUE fields: the first must be keys[0], each key
// at most once, every value non-empty.
func keyValues(fields []string, keys []string) (map[string]string, error) {
	kv := make(map[string]string)
	for i, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not KEY=VALUE", f)
		}
		key := canonicalIn(k, keys)
		switch {
		case key == "":
			return nil, fmt.Errorf("unknown key %s on a %s line (valid: %s)", k, keys[0], strings.Join(keys, ", "))
		case i == 0 && key != keys[0]:
			return nil, fmt.Errorf("a line must start with %s=, not %s", keys[0], k)
		}
		if _, dup := kv[key]; dup {
			return nil, fmt.Errorf("%s is given twice", key)
		}
		if v == "" {
			return nil, fmt.Errorf("%s has no value", key)
		}
		kv[key] = v
	}
	return kv, nil
}

func checkName(key, v string) error {
	if strings.ContainsAny(v, ",[]=") {
		return fmt.Errorf("invalid %s %q", key, v)
	}
	return nil
}

// parseShares reads Fairshare=N: a positive number.
func parseShares(v string) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) || strings.ContainsAny(v, "xXpP_") {
		return 0, errors.New("Fairshare=" + v + ": use a number of shares above 0")
	}
	return f, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
