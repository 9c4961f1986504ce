package load

import (
	"math"
	"math/rand/v2"
)

// gen is the schedule's random stream: PCG (whose output math/rand/v2
// specifies exactly) and variates derived from it here, so that a seed
// gives the same schedule whatever the Go release.
type gen struct {
	src *rand.PCG
	// spare normal from Box–Muller
	spare    float64
	hasSpare bool
}

func newGen(seed int64) *gen {
	return &gen{src: rand.NewPCG(uint64(seed), 0x5a6e_6265_6e63_6821)}
}

// uniform returns a float64 in the open interval (0, 1).
func (g *gen) uniform() float64 {
	return (float64(g.src.Uint64()>>11) + 0.5) / (1 << 53)
}

// exp returns a unit exponential variate (inverse CDF).
func (g *gen) exp() float64 { return -math.Log(g.uniform()) }

// normal returns a standard normal variate (Box–Muller).
func (g *gen) normal() float64 {
	if g.hasSpare {
		g.hasSpare = false
		return g.spare
	}
	u1, u2 := g.uniform(), g.uniform()
	r := math.Sqrt(-2 * math.Log(u1))
	s, c := math.Sincos(2 * math.Pi * u2)
	g.spare, g.hasSpare = r*s, true
	return r * c
}

// gamma returns a Gamma(k, 1) variate (Marsaglia–Tsang; for k < 1 the
// boost Gamma(k+1)·U^(1/k)).
func (g *gen) gamma(k float64) float64 {
	if k < 1 {
		return g.gamma(k+1) * math.Pow(g.uniform(), 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := g.normal()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := g.uniform()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
