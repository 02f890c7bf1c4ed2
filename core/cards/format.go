package cards

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks text that was cut to fit a limit.
const Ellipsis = "…"

// Len counts characters the way the platforms count them: Unicode code
// points, not bytes.
func Len(s string) int { return utf8.RuneCountInString(s) }

// Truncate cuts s to at most max characters, ending with an ellipsis when
// anything was cut. It never cuts inside a rune, and it does not leave a
// combining mark, a variation selector or a zero-width joiner separated from
// the character before it (which would render as a broken glyph).
func Truncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if len(s) <= max { // bytes ≥ characters
		return s
	}
	// Walk max characters in; only that prefix (and the next character) is
	// ever looked at, so cutting a long text costs what is kept.
	i := 0
	for n := 0; i < len(s) && n < max; n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i >= len(s) {
		return s
	}
	if max == 1 {
		return Ellipsis
	}
	_, size := utf8.DecodeRuneInString(s[i:])
	runes := []rune(s[:i+size])
	cut := max - 1 // keep runes[:cut], then the ellipsis
	// The first dropped rune may belong to the character before the cut;
	// drop that whole cluster rather than showing half of it.
	for cut > 0 && cut < len(runes) && joinsPrevious(runes[cut]) {
		cut--
	}
	// A flag is a pair of regional indicators; never keep half of one.
	if cut < len(runes) && isRegional(runes[cut]) {
		n := 0
		for i := cut - 1; i >= 0 && isRegional(runes[i]); i-- {
			n++
		}
		if n%2 == 1 {
			cut--
		}
	}
	for cut > 0 && (runes[cut-1] == zwj || unicode.IsSpace(runes[cut-1])) {
		cut--
	}
	return string(runes[:cut]) + Ellipsis
}

const zwj = '\u200d'

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// joinsPrevious reports whether r is drawn together with the rune before it.
func joinsPrevious(r rune) bool {
	return r == zwj || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) ||
		unicode.Is(unicode.Variation_Selector, r) ||
		(r >= 0x1F3FB && r <= 0x1F3FF) // skin tone modifiers
}

// minorUnits is the number of decimals of the currencies that do not use
// two (ISO 4217).
var minorUnits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0,
	"KRW": 0, "PYG": 0, "RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0,
	"XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// prefixSymbols are written before the amount; every other currency is
// written as "1,234.00 CHF", which nobody misreads.
var prefixSymbols = map[string]string{
	"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹", "KRW": "₩",
	"CNY": "CN¥", "CAD": "CA$", "AUD": "A$", "NZD": "NZ$", "HKD": "HK$",
	"MXN": "MX$", "BRL": "R$", "ILS": "₪", "VND": "₫", "PHP": "₱",
}

// FormatPrice writes a price as people read it: "$1,234.50 / night".
func FormatPrice(p Price) string {
	cur := strings.ToUpper(p.Currency)
	dec, ok := minorUnits[cur]
	if !ok {
		dec = 2
	}
	amount := p.Amount
	neg := amount < 0
	if neg {
		amount = -amount
	}
	num := FormatNumber(amount, dec)
	var s string
	if sym, ok := prefixSymbols[cur]; ok {
		s = sym + num
	} else {
		s = num + " " + cur
	}
	if neg {
		s = "-" + s
	}
	if p.Unit != "" {
		s += " / " + p.Unit
	}
	return s
}

// FormatNumber writes a non-negative number with thousands separators and
// exactly dec decimals.
func FormatNumber(v float64, dec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "?"
	}
	s := strconv.FormatFloat(v, 'f', dec, 64)
	intPart, frac, hasFrac := strings.Cut(s, ".")
	sign := ""
	if strings.HasPrefix(intPart, "-") {
		sign, intPart = "-", intPart[1:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// trimNumber writes v with at most dec decimals and no trailing zeros.
func trimNumber(v float64, dec int) string {
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// RatingText writes a rating as five stars and the score: "★★★★☆ 4.3/5 (1,204)".
func RatingText(r Rating) string {
	max := r.Max
	if max <= 0 || math.IsNaN(max) || math.IsInf(max, 0) {
		max = 5
	}
	v := math.Max(0, math.Min(r.Value, max))
	if math.IsNaN(v) {
		v = 0
	}
	filled := int(math.Round(v / max * 5))
	s := strings.Repeat("★", filled) + strings.Repeat("☆", 5-filled) +
		" " + trimNumber(v, 1) + "/" + trimNumber(max, 1)
	if r.Count > 0 {
		s += " (" + FormatNumber(float64(r.Count), 0) + ")"
	}
	return s
}

// ChangeText writes a change indicator: "▲ 1.24% 1D".
func ChangeText(c Change) string {
	arrow := "▬"
	switch c.Direction {
	case DirectionUp:
		arrow = "▲"
	case DirectionDown:
		arrow = "▼"
	}
	p := math.Abs(c.Percent)
	if math.IsNaN(p) || math.IsInf(p, 0) {
		p = 0
	}
	s := arrow + " " + FormatNumber(p, 2) + "%"
	if c.Label != "" {
		s += " " + c.Label
	}
	return s
}

// sparkRunes are the eight heights of a Unicode sparkline.
var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// SparklineWidth is how many characters a text sparkline takes at most.
const SparklineWidth = 24

// SparklineText draws values as a line of block characters, at most width
// wide (longer series are averaged into buckets). Values that are not finite
// are skipped; fewer than two usable values draw nothing.
func SparklineText(values []float64, width int) string {
	vs := make([]float64, 0, len(values))
	for _, v := range values {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			vs = append(vs, v)
		}
	}
	if len(vs) < 2 || width < 2 {
		return ""
	}
	if len(vs) > width {
		out := make([]float64, width)
		for i := range out {
			lo, hi := i*len(vs)/width, (i+1)*len(vs)/width
			var sum float64
			for _, v := range vs[lo:hi] {
				sum += v
			}
			out[i] = sum / float64(hi-lo)
		}
		vs = out
	}
	lo, hi := vs[0], vs[0]
	for _, v := range vs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	var b strings.Builder
	for _, v := range vs {
		i := len(sparkRunes) / 2
		if hi > lo {
			i = int(math.Round((v - lo) / (hi - lo) * float64(len(sparkRunes)-1)))
		}
		b.WriteRune(sparkRunes[i])
	}
	return b.String()
}

// CalloutIcon is the emoji that marks a callout of the given level.
func CalloutIcon(level string) string {
	switch level {
	case LevelSuccess:
		return "✅"
	case LevelWarning:
		return "⚠️"
	case LevelError:
		return "🛑"
	default:
		return "ℹ️"
	}
}

// TaskBox is the check box shown before a task.
func TaskBox(done *bool) string {
	switch {
	case done == nil:
		return ""
	case *done:
		return "☑"
	default:
		return "☐"
	}
}
