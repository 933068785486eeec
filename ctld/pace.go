package ctld

import "time"

// cyclePacer spaces scheduling cycles so that, over time, planning takes
// at most 1/(1+restFactor) of a core, while a cycle after a quiet spell
// runs at once. Each cycle of length d owes restFactor*d of rest; time
// spent idle pays the debt off; only debt above restBurst has to be
// waited out, and never more than maxRest at a time.
//
// Resting a fixed restFactor*d after every cycle (the simpler rule) made
// an event that came just after a cycle wait out that rest even after a
// long idle spell.
type cyclePacer struct {
	debt    time.Duration
	lastEnd time.Time
}

// wait is how long to rest at now before the next cycle may start.
func (p *cyclePacer) wait(now time.Time) time.Duration {
	owed := p.debt - now.Sub(p.lastEnd)
	if owed <= restBurst {
		return 0
	}
	return min(owed-restBurst, maxRest)
}

// ran records a cycle that ran from start to end.
func (p *cyclePacer) ran(start, end time.Time) {
	owed := max(p.debt-start.Sub(p.lastEnd), 0)
	p.debt = min(owed+restFactor*end.Sub(start), restBurst+maxRest)
	p.lastEnd = end
}
