package record

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"unicode/utf8"
)

// checkAppend asserts that AppendRequest gives json.Marshal's bytes for r
// (or fails where it fails) and, for valid UTF-8, decodes back to r.
func checkAppend(t *testing.T, r Request) {
	t.Helper()
	want, werr := json.Marshal(r)
	got, gerr := AppendRequest([]byte("prefix"), &r)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("Marshal error %v, AppendRequest error %v", werr, gerr)
	}
	if werr != nil {
		return
	}
	if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[6:], want) {
		t.Fatalf("AppendRequest\n got %s\nwant %s", got, want)
	}
	if !validStrings(r) {
		return
	}
	var back Request
	if err := json.Unmarshal(got[6:], &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(normal(back), normal(r)) {
		t.Fatalf("decoded\n got %+v\nwant %+v", back, r)
	}
}

// normal maps what JSON cannot tell apart (an empty and a nil TokenNS,
// -0 and 0 in omitted fields) to one form.
func normal(r Request) Request {
	if len(r.TokenNS) == 0 {
		r.TokenNS = nil
	}
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Float64 && f.Float() == 0 {
			f.SetFloat(0)
		}
	}
	if r.QueueMs != nil && *r.QueueMs == 0 {
		r.QueueMs = new(float64)
	}
	return r
}

// validStrings reports whether every string in r, nested ones (a try's
// error class) included, is valid UTF-8: JSON turns invalid bytes into
// U+FFFD, so only such a record decodes back to itself.
func validStrings(r Request) bool { return validIn(reflect.ValueOf(r)) }

func validIn(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return utf8.ValidString(v.String())
	case reflect.Pointer:
		return v.IsNil() || validIn(v.Elem())
	case reflect.Slice:
		for i := range v.Len() {
			if !validIn(v.Index(i)) {
				return false
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if !validIn(v.Field(i)) {
				return false
			}
		}
	}
	return true
}

func TestAppendRequest(t *testing.T) {
	q0, q := 0.0, 0.012
	negZero := math.Copysign(0, -1)
	tests := []struct {
		name string
		r    Request
	}{
		{"zero", Request{}},
		{"embedding", embeddingRecord()},
		{"queue zero is kept", Request{ID: "a", QueueMs: &q0}},
		{"queue", Request{ID: "a", QueueMs: &q}},
		{"negative zero", Request{E2EMs: negZero, TTFTMs: negZero, LagMs: -1.5}},
		{"tiny and huge floats", Request{E2EMs: 1e-7, ServiceMs: 1e21, LagMs: 123456789.125, TTFTMs: 1e-6, TPOTMs: 5e-324}},
		{"tokens", Request{TokenNS: []int64{1, -2, math.MaxInt64, math.MinInt64}, TokenNSDropped: 7}},
		{"empty tokens", Request{TokenNS: []int64{}}},
		{"html and controls", Request{Error: "<a href=\"x\">&</a>\\\b\f\n\r\t\x00\x1f\x7f"}},
		{"unicode", Request{Note: "é ✓ 😀 \u2028 \u2029 \ufffd"}},
		{"invalid utf-8", Request{Error: "a\xffb\xc3(c\xe2\x82"}},
		{"NaN", Request{ID: "x", E2EMs: math.NaN()}},
		{"infinity", Request{ServerE2EMs: math.Inf(1)}},
		{"every field", fill(rand.New(rand.NewPCG(1, 2)), "tenant-a <b>")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkAppend(t, tc.r) })
	}
}

// TestAppendRequestEveryField: a field added to Request and not to
// AppendRequest makes the two encodings differ.
func TestAppendRequestEveryField(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		checkAppend(t, fill(rng, "x\"é\u2028<"))
	}
	r := fill(rng, "s")
	v := reflect.ValueOf(r)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("fill left %s zero: the test would not see it", v.Type().Field(i).Name)
		}
	}
}

// fill sets every field of a Request by reflection: strings cut from s,
// numbers from rng (sometimes zero, sometimes extreme).
func fill(rng *rand.Rand, s string) Request {
	var r Request
	v := reflect.ValueOf(&r).Elem()
	for i := range v.NumField() {
		fillValue(rng, v.Field(i), s)
	}
	return r
}

func fillValue(rng *rand.Rand, f reflect.Value, s string) {
	floats := []float64{1e-7, 1e21, 0.5, 123.456, -2, 1e300, math.SmallestNonzeroFloat64}
	switch f.Kind() {
	case reflect.String:
		a := rng.IntN(len(s) + 1)
		f.SetString(s[a:] + s[:a] + "v")
	case reflect.Int, reflect.Int64:
		f.SetInt([]int64{1, -1, math.MaxInt64, math.MinInt64, rng.Int64()}[rng.IntN(5)])
	case reflect.Float64:
		x := floats[rng.IntN(len(floats))]
		if x > 1e-300 {
			x *= 0.5 + rng.Float64() // never 0: the check of fill sees every field set
		}
		f.SetFloat(x)
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Slice:
		n := 1 + rng.IntN(4)
		f.Set(reflect.MakeSlice(f.Type(), n, n))
		for k := range n {
			fillValue(rng, f.Index(k), s)
		}
	case reflect.Pointer:
		f.Set(reflect.New(f.Type().Elem()))
		fillValue(rng, f.Elem(), s)
	case reflect.Struct:
		for k := range f.NumField() {
			fillValue(rng, f.Field(k), s)
		}
	default:
		panic("fill: a field of kind " + f.Kind().String() + " needs a case here and in AppendRequest")
	}
}

// FuzzAppendRequest: any strings and numbers encode as json.Marshal
// encodes them.
func FuzzAppendRequest(f *testing.F) {
	f.Add("fifo-00001", "<&>\u2028\xff", 0.25, int64(42), uint64(1))
	f.Add("", "", math.Copysign(0, -1), int64(0), uint64(0))
	f.Fuzz(func(t *testing.T, id, text string, x float64, n int64, seed uint64) {
		r := fill(rand.New(rand.NewPCG(seed, uint64(n))), text)
		r.ID, r.Error, r.E2EMs, r.IntendedNS = id, text, x, n
		if seed%3 == 0 {
			r.QueueMs, r.TokenNS, r.Note, r.TTFTMs = nil, nil, "", 0
		}
		checkAppend(t, r)
	})
}
