package ctld

import (
	"testing"
	"time"
)

func TestCyclePacer(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	ms := time.Millisecond
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	t.Run("short cycles close together run at once", func(t *testing.T) {
		var p cyclePacer
		p.ran(at(0), at(3*ms))
		if w := p.wait(at(4 * ms)); w != 0 {
			t.Fatalf("second event 1ms after a 3ms cycle waits %v, want 0", w)
		}
	})

	t.Run("back-to-back cycles settle at a third of a core", func(t *testing.T) {
		var p cyclePacer
		now := at(0)
		var busy, waited time.Duration
		for i := 0; i < 2000; i++ {
			w := p.wait(now)
			now = now.Add(w)
			waited += w
			p.ran(now, now.Add(10*ms))
			now = now.Add(10 * ms)
			busy += 10 * ms
		}
		share := float64(busy) / float64(busy+waited)
		if share < 0.32 || share > 0.36 {
			t.Fatalf("planning share under a flood = %.3f, want about 1/3", share)
		}
	})

	t.Run("a long cycle rests at most maxRest", func(t *testing.T) {
		var p cyclePacer
		p.ran(at(0), at(400*ms))
		p.ran(at(400*ms), at(800*ms))
		if w := p.wait(at(800 * ms)); w != maxRest {
			t.Fatalf("after two 400ms cycles the rest is %v, want %v", w, maxRest)
		}
	})

	t.Run("idle time pays the debt off", func(t *testing.T) {
		var p cyclePacer
		p.ran(at(0), at(200*ms)) // owes 400ms
		if w := p.wait(at(200 * ms)); w != 150*ms {
			t.Fatalf("right after: rest %v, want 150ms", w)
		}
		if w := p.wait(at(400 * ms)); w != 0 {
			t.Fatalf("after 200ms idle: rest %v, want 0", w)
		}
	})
}
