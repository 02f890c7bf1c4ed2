package compare

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// answerWidth is how much of an answer its table row shows; the whole
// answer follows the table.
const answerWidth = 60

// WriteTable prints the rows as a table (model, latency, tokens in and out,
// cost, the start of the answer or the error), then each model's whole
// answer under its name.
func WriteTable(w io.Writer, rows []Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tLATENCY\tIN\tOUT\tCOST\tANSWER")
	for _, r := range rows {
		answer := oneLine(r.Answer, answerWidth)
		if r.Error != "" {
			answer = "error: " + oneLine(r.Error, answerWidth*2)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", r.Model, latency(r.Latency), r.InputTokens, r.OutputTokens, Cost(r), answer)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Error != "" {
			continue
		}
		if _, err := fmt.Fprintf(w, "\n== %s ==\n%s\n", r.Model, strings.TrimRight(r.Answer, "\n")); err != nil {
			return err
		}
	}
	return nil
}

// Cost is a row's cost as a person reads it: dollars, "-" when the model
// has no known price or gave no answer.
func Cost(r Result) string {
	if r.Error != "" || !r.Priced {
		return "-"
	}
	return fmt.Sprintf("$%.6f", float64(r.CostMicroUSD)/1e6)
}

func latency(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(time.Millisecond).String()
}

// oneLine flattens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
