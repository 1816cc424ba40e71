package sandbox

import (
	"math"
	"time"
)

// cpuUsageHalfLife is how fast an owner's recorded slot use fades: use a
// second ago counts half as much as use now.
const cpuUsageHalfLife = time.Second

// cpuUsage is an owner's recent use of the host's CPU slots, decayed
// exponentially with cpuUsageHalfLife: slot time (the integral of its
// running calls) and calls ended. Their ratio is the owner's recent mean
// call length, which decay leaves unchanged, so a tenant whose calls run
// to their deadline is known as such for as long as it is remembered.
type cpuUsage struct {
	slotTime float64 // decayed slot-seconds
	calls    float64 // decayed count of calls ended
	stamp    time.Time
}

// advance brings the sums to now, running calls having run since stamp.
func (u *cpuUsage) advance(now time.Time, running int) {
	if u.stamp.IsZero() {
		u.stamp = now
		return
	}
	dt := now.Sub(u.stamp).Seconds()
	if dt <= 0 {
		return
	}
	h := cpuUsageHalfLife.Seconds()
	f := math.Exp2(-dt / h)
	// Slot time accrued during dt, each instant decayed by its age:
	// ∫₀^dt running·2^(-(dt-s)/h) ds.
	u.slotTime = u.slotTime*f + float64(running)*h/math.Ln2*(1-f)
	u.calls *= f
	u.stamp = now
}

// callEnded records one call ending at now (running counts it).
func (u *cpuUsage) callEnded(now time.Time, running int) {
	u.advance(now, running)
	u.calls++
}

// callLen is the recent mean slot time per call, calls still running
// counting as calls (so a first call that runs long shows at once).
func (u *cpuUsage) callLen(running int) time.Duration {
	n := u.calls + float64(running)
	if n == 0 {
		return 0
	}
	return time.Duration(u.slotTime / n * float64(time.Second))
}

// linger is how long other owners stay active after their last call, as
// seen by an owner with this usage that wants more than its share.
func (u *cpuUsage) linger(running int) time.Duration {
	return min(max(cpuLingerFactor*u.callLen(running), cpuLinger), cpuMaxLinger)
}
