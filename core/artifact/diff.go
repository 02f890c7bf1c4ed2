package artifact

import (
	"fmt"
	"strings"
)

// The diff between two versions, in the unified format (diff -u), by
// lines. The common head and tail are set aside first, so a small edit of a
// large artifact compares only the lines between; those are matched by
// their longest common subsequence, or, past maxCells comparisons, shown
// as one replaced block.

const (
	diffContext = 3
	maxCells    = 4_000_000
)

type opKind byte

const (
	opEqual opKind = ' '
	opDel   opKind = '-'
	opAdd   opKind = '+'
)

type op struct {
	kind opKind
	line string
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Unified is the unified diff turning from into to, with the names in its
// header; "" when they are equal.
func Unified(from, to, fromName, toName string) string {
	a, b := splitLines(from), splitLines(to)
	ops := diffLines(a, b)
	changed := false
	for _, o := range ops {
		if o.kind != opEqual {
			changed = true
			break
		}
	}
	if !changed {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
	// Hunks: runs of changes with diffContext equal lines around them,
	// joined when the equal lines between two changes are few.
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == opEqual {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-diffContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != opEqual {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == opEqual {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, len(ops))
				break
			}
			end = run
		}
		writeHunk(&out, ops, start, end)
		i = end
	}
	return out.String()
}

func writeHunk(out *strings.Builder, ops []op, start, end int) {
	aLine, bLine := 1, 1
	for _, o := range ops[:start] {
		if o.kind != opAdd {
			aLine++
		}
		if o.kind != opDel {
			bLine++
		}
	}
	aCount, bCount := 0, 0
	for _, o := range ops[start:end] {
		if o.kind != opAdd {
			aCount++
		}
		if o.kind != opDel {
			bCount++
		}
	}
	if aCount == 0 {
		aLine--
	}
	if bCount == 0 {
		bLine--
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aLine, aCount), hunkRange(bLine, bCount))
	for _, o := range ops[start:end] {
		out.WriteByte(byte(o.kind))
		out.WriteString(o.line)
		if !strings.HasSuffix(o.line, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func hunkRange(line, count int) string {
	if count == 1 {
		return fmt.Sprint(line)
	}
	return fmt.Sprintf("%d,%d", line, count)
}

func diffLines(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []op
	for _, l := range a[:pre] {
		ops = append(ops, op{opEqual, l})
	}
	ops = append(ops, middle(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		ops = append(ops, op{opEqual, l})
	}
	return ops
}

// middle matches the lines by their longest common subsequence.
func middle(a, b []string) []op {
	var ops []op
	if len(a)*len(b) > maxCells {
		for _, l := range a {
			ops = append(ops, op{opDel, l})
		}
		for _, l := range b {
			ops = append(ops, op{opAdd, l})
		}
		return ops
	}
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			ops = append(ops, op{opEqual, a[i]})
			i, j = i+1, j+1
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			ops = append(ops, op{opDel, a[i]})
			i++
		default:
			ops = append(ops, op{opAdd, b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		ops = append(ops, op{opDel, a[i]})
	}
	for ; j < len(b); j++ {
		ops = append(ops, op{opAdd, b[j]})
	}
	return ops
}
