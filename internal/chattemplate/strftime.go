package chattemplate

import (
	"strconv"
	"strings"
	"time"
)

// strftime formats t with the Python directives chat templates use
// (Llama 3.2's strftime_now("%d %b %Y")); others are kept as written.
func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		switch format[i] {
		case 'd':
			b.WriteString(t.Format("02"))
		case 'm':
			b.WriteString(t.Format("01"))
		case 'y':
			b.WriteString(t.Format("06"))
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'b':
			b.WriteString(t.Format("Jan"))
		case 'B':
			b.WriteString(t.Format("January"))
		case 'a':
			b.WriteString(t.Format("Mon"))
		case 'A':
			b.WriteString(t.Format("Monday"))
		case 'H':
			b.WriteString(t.Format("15"))
		case 'M':
			b.WriteString(t.Format("04"))
		case 'S':
			b.WriteString(t.Format("05"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
