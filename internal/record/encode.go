package record

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendRequest appends r's requests.jsonl line (without the newline) to
// dst: byte for byte what encoding/json's Marshal gives for r, written
// without reflection because the sink encodes one line per request
// (FuzzAppendRequest and TestAppendRequestEveryField hold the two
// together, every field). Like Marshal it fails on a NaN or infinite
// float, which JSON cannot carry.
func AppendRequest(dst []byte, r *Request) ([]byte, error) {
	b := append(dst, `{"id":`...)
	b = appendString(b, r.ID)
	b = appendInt(b, `,"seq":`, int64(r.Seq))
	b = appendString(append(b, `,"kind":`...), r.Kind)
	b = appendString(append(b, `,"type":`...), r.Type)
	b = appendOptString(b, `,"stage":`, r.Stage)
	b = appendOptString(b, `,"txn_id":`, r.TxnID)
	b = appendOptString(b, `,"phase":`, r.Phase)
	b = appendOptString(b, `,"tenant":`, r.Tenant)
	b = appendOptString(b, `,"priority":`, r.Priority)
	b = appendOptString(b, `,"model":`, r.Model)
	b = appendInt(b, `,"intended_ns":`, r.IntendedNS)
	b = appendInt(b, `,"sent_ns":`, r.SentNS)
	b = appendOptInt(b, `,"first_byte_ns":`, r.FirstByte)
	b = appendOptInt(b, `,"first_token_ns":`, r.FirstToken)
	b = appendInt(b, `,"end_ns":`, r.EndNS)
	if len(r.TokenNS) > 0 {
		b = append(b, `,"token_ns":[`...)
		for i, t := range r.TokenNS {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, t, 10)
		}
		b = append(b, ']')
	}
	b = appendOptInt(b, `,"token_ns_dropped":`, int64(r.TokenNSDropped))
	f := floats{b: b}
	f.put(`,"e2e_ms":`, r.E2EMs)
	f.put(`,"service_ms":`, r.ServiceMs)
	f.put(`,"lag_ms":`, r.LagMs)
	f.opt(`,"ttft_ms":`, r.TTFTMs)
	f.opt(`,"tpot_ms":`, r.TPOTMs)
	b = appendInt(f.b, `,"status":`, int64(r.Status))
	b = strconv.AppendBool(append(b, `,"ok":`...), r.OK)
	b = strconv.AppendBool(append(b, `,"slo_met":`...), r.SLOMet)
	b = appendOptString(b, `,"error_class":`, r.ErrorClass)
	b = appendOptString(b, `,"error":`, r.Error)
	b = appendOptString(b, `,"engine":`, r.Engine)
	b = appendOptInt(b, `,"retries":`, int64(r.Retries))
	b = appendOptInt(b, `,"prompt_tokens":`, int64(r.PromptTok))
	f.b = b
	if r.QueueMs != nil {
		f.put(`,"queue_ms":`, *r.QueueMs)
	}
	f.b = appendOptInt(f.b, `,"completion_tokens":`, int64(r.OutputTok))
	f.opt(`,"server_ttft_ms":`, r.ServerTTFTMs)
	f.opt(`,"server_e2e_ms":`, r.ServerE2EMs)
	f.b = appendOptInt(f.b, `,"first_answer_token_ns":`, r.FirstAnswerToken)
	f.opt(`,"ttfat_ms":`, r.TTFATMs)
	if f.err != nil {
		return dst, f.err
	}
	b = appendOptString(f.b, `,"note":`, r.Note)
	b = appendOptString(b, `,"node":`, r.Node)
	b = appendOptInt(b, `,"input_tokens":`, int64(r.InputTokens))
	b = appendOptInt(b, `,"output_tokens":`, int64(r.OutputTokens))
	b = appendOptInt(b, `,"prefix_group":`, int64(r.PrefixGroup))
	b = appendOptString(b, `,"session":`, r.Session)
	b = appendOptInt(b, `,"turn":`, int64(r.Turn))
	b = appendOptInt(b, `,"attempt":`, int64(r.Attempt))
	b = appendOptInt(b, `,"attempts":`, int64(r.Attempts))
	b = appendOptInt(b, `,"replays":`, int64(r.Replays))
	if len(r.Tries) > 0 {
		b = append(b, `,"tries":[`...)
		for i := range r.Tries {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendTry(b, &r.Tries[i])
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

func appendTry(b []byte, t *Try) []byte {
	b = appendInt(append(b, '{'), `"n":`, int64(t.N))
	if t.Hedge {
		b = append(b, `,"hedge":true`...)
	}
	if t.Superseded {
		b = append(b, `,"superseded":true`...)
	}
	b = appendInt(b, `,"sent_ns":`, t.SentNS)
	b = appendInt(b, `,"end_ns":`, t.EndNS)
	b = appendOptInt(b, `,"status":`, int64(t.Status))
	b = appendOptString(b, `,"error_class":`, t.ErrorClass)
	b = appendOptInt(b, `,"replays":`, int64(t.Replays))
	return append(b, '}')
}

func appendInt(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(b, key...), v, 10)
}

// appendOptInt is an omitempty integer.
func appendOptInt(b []byte, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	return appendInt(b, key, v)
}

// appendOptString is an omitempty string.
func appendOptString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, key...), s)
}

// floats appends float fields, keeping the first unsupported value's
// error.
type floats struct {
	b   []byte
	err error
}

func (f *floats) put(key string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if f.err == nil {
			f.err = fmt.Errorf("json: unsupported value: %s (%s)", strconv.FormatFloat(v, 'g', -1, 64), key[2:len(key)-2])
		}
		return
	}
	f.b = appendFloat(append(f.b, key...), v)
}

// opt is an omitempty float (0 and -0 are left out, as by encoding/json).
func (f *floats) opt(key string, v float64) {
	if v != 0 {
		f.put(key, v)
	}
}

// appendFloat formats v as encoding/json does (ES6 number formatting:
// shortest round-trip digits, exponent form below 1e-6 and from 1e21,
// exponent without leading zeros).
func appendFloat(b []byte, v float64) []byte {
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s quoted as encoding/json's Marshal quotes
// it, byte for byte (see appendString): for a hot path that writes JSON
// without reflection.
func AppendJSONString(b []byte, s string) []byte { return appendString(b, s) }

// appendString quotes s as encoding/json does with HTML escaping (its
// Marshal default): control characters, <, > and & as \u00XX, invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscaped(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}

// appendEscaped escapes one ASCII byte that may not stand for itself.
func appendEscaped(b []byte, c byte) []byte {
	switch c {
	case '\\', '"':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
