package result

import "testing"

func TestMeanCI(t *testing.T) {
	tests := []struct {
		mean, lo, hi float64
		unit, want   string
	}{
		{829.3, 539.3, 1119.3, Ms, "829 ± 290 ms"},
		{100.27, 97.48, 103.06, ReqPerS, "100.3 ± 2.8 req/s"},
		{20.08, 19.13, 21.03, Ms, "20.08 ± 0.95 ms"},
		{0.925, 0.913, 0.937, Fraction, "92.5 ± 1.2 %"},
		{0.992, 0.971, 1, Fraction, "99.2 (97.1–100.0) %"},
		{150, 0, 352, Ms, "150 (0–352) ms"},
		{1.18, 0.9, 1.46, Ratio, "1.18 ± 0.28×"},
		{13.3, 10.1, 16.5, Count, "13.3 ± 3.2"},
		{1, 1, 1, Fraction, "100 ± 0 %"},
		{1234567, 1234000, 1235134, Ms, "1,234,567 ± 567 ms"},
	}
	for _, tt := range tests {
		if got := MeanCI(tt.mean, tt.lo, tt.hi, tt.unit); got != tt.want {
			t.Errorf("MeanCI(%v, %v, %v, %s) = %q, want %q", tt.mean, tt.lo, tt.hi, tt.unit, got, tt.want)
		}
	}
}
