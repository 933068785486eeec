package jobspec

import (
	"fmt"
	"strings"
)

// Constraint is a parsed -C/--constraint: node features joined by '&'
// (and, binding tighter) and '|' (or), grouped with '(...)' or '[...]'.
// Slurm's '[a|b]' asks that all of a job's nodes share one choice; a
// Constraint matches one node at a time, so the controller refuses
// brackets on a multi-node job (Brackets says whether there are any).
// Counts (a*2) are refused at parse.
type Constraint struct {
	or       [][]cterm // any of these conjunctions
	Brackets bool
}

// cterm is a feature name, or a nested group.
type cterm struct {
	name  string
	group *Constraint
}

// ParseConstraint reads s; the error says what is wrong in one line.
func ParseConstraint(s string) (Constraint, error) {
	p := &cparser{s: s}
	c, err := p.expr()
	if err == nil && p.pos < len(s) {
		err = fmt.Errorf("unexpected %q at %d", s[p.pos], p.pos+1)
	}
	if err != nil {
		return Constraint{}, fmt.Errorf("invalid --constraint %s: %v (use features joined by & and |, grouped with () or [])", quoteValue(s), err)
	}
	c.Brackets = p.brackets
	return c, nil
}

type cparser struct {
	s        string
	pos      int
	brackets bool
}

func (p *cparser) expr() (Constraint, error) {
	var c Constraint
	for {
		var and []cterm
		for {
			t, err := p.term()
			if err != nil {
				return c, err
			}
			and = append(and, t)
			if p.pos < len(p.s) && p.s[p.pos] == '&' {
				p.pos++
				continue
			}
			break
		}
		c.or = append(c.or, and)
		if p.pos < len(p.s) && p.s[p.pos] == '|' {
			p.pos++
			continue
		}
		return c, nil
	}
}

func (p *cparser) term() (cterm, error) {
	if p.pos >= len(p.s) {
		return cterm{}, fmt.Errorf("a feature is missing at the end")
	}
	if open := p.s[p.pos]; open == '(' || open == '[' {
		closing := map[byte]byte{'(': ')', '[': ']'}[open]
		p.brackets = p.brackets || open == '['
		p.pos++
		g, err := p.expr()
		if err != nil {
			return cterm{}, err
		}
		if p.pos >= len(p.s) || p.s[p.pos] != closing {
			return cterm{}, fmt.Errorf("%q is not closed", open)
		}
		p.pos++
		return cterm{group: &g}, nil
	}
	start := p.pos
	for p.pos < len(p.s) && isFeatureByte(p.s[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		if p.s[p.pos] == '*' {
			return cterm{}, fmt.Errorf("node counts (feature*N) are not supported")
		}
		return cterm{}, fmt.Errorf("a feature is missing at %d", p.pos+1)
	}
	if p.pos < len(p.s) && p.s[p.pos] == '*' {
		return cterm{}, fmt.Errorf("node counts (feature*N) are not supported")
	}
	return cterm{name: p.s[start:p.pos]}, nil
}

// isFeatureByte: feature names are letters, digits, '_', '-', '.' and ':'.
func isFeatureByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_-.:", c) >= 0
}

// Matches reports whether a node with these features satisfies c.
func (c Constraint) Matches(features []string) bool {
	for _, and := range c.or {
		ok := true
		for _, t := range and {
			if !t.matches(features) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (t cterm) matches(features []string) bool {
	if t.group != nil {
		return t.group.Matches(features)
	}
	for _, f := range features {
		if f == t.name {
			return true
		}
	}
	return false
}
