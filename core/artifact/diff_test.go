package artifact

import "testing"

func TestUnified(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", "--- v1\n+++ v2\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"added at the end", "a\n", "a\nb\n", "--- v1\n+++ v2\n@@ -1 +1,2 @@\n a\n+b\n"},
		{"from nothing", "", "x\n", "--- v1\n+++ v2\n@@ -0,0 +1 @@\n+x\n"},
		{"no newline at the end", "a", "b", "--- v1\n+++ v2\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"},
		{
			"two hunks far apart",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
			"one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n",
			"--- v1\n+++ v2\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+twelve\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Unified(c.from, c.to, "v1", "v2"); got != c.want {
				t.Fatalf("Unified:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}
