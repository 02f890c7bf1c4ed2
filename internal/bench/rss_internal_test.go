package bench

import "testing"

func TestParseRSSReadsTotalAndParts(t *testing.T) {
	r, err := parseRSS("Name:\tswitchboard\nVmRSS:\t   43328 kB\nRssAnon:\t    8768 kB\nRssFile:\t   34560 kB\nRssShmem:\t       0 kB\n")
	if err != nil {
		t.Fatal(err)
	}
	if r.total != 43328.0/1024 || r.anon != 8768.0/1024 || r.file != 34560.0/1024 {
		t.Fatalf("parsed %+v", r)
	}
	if _, err := parseRSS("Name:\tx\n"); err == nil {
		t.Fatal("a status without VmRSS parsed")
	}
	if _, err := parseRSS("VmRSS:\tlots kB\n"); err == nil {
		t.Fatal("a malformed VmRSS parsed")
	}
}
