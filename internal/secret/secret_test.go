package secret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func key(b byte) string { return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32)) }

func TestSealOpenRotate(t *testing.T) {
	old, err := ParseKeys("old:" + key(1))
	if err != nil {
		t.Fatal(err)
	}
	s, err := old.Seal([]byte("xoxb-secret"), "slack_installation:T1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(s), "xoxb") || s.KeyID() != "old" {
		t.Fatalf("sealed %q: want no clear text and key id old", s)
	}
	both, err := ParseKeys("new:" + key(2) + ", old:" + key(1))
	if err != nil {
		t.Fatal(err)
	}
	got, err := both.Open(s, "slack_installation:T1")
	if err != nil || string(got) != "xoxb-secret" {
		t.Fatalf("open after adding a key: %q, %v", got, err)
	}
	if !both.NeedsRotation(s) {
		t.Fatal("a value under the old key must need rotation")
	}
	again, _ := both.Seal(got, "slack_installation:T1")
	if again.KeyID() != "new" || both.NeedsRotation(again) {
		t.Fatalf("resealed under %q; want new", again.KeyID())
	}
	if _, err := both.Open(s, "slack_installation:T2"); !errors.Is(err, ErrOpen) {
		t.Fatalf("opening for another row: %v; want ErrOpen", err)
	}
	newOnly, _ := ParseKeys("new:" + key(2))
	if _, err := newOnly.Open(s, "slack_installation:T1"); !errors.Is(err, ErrOpen) || !strings.Contains(err.Error(), `"old"`) {
		t.Fatalf("opening with the old key dropped: %v; want ErrOpen naming the key", err)
	}
}

func TestNoKeyNamesTheSetting(t *testing.T) {
	var k *Keyring
	if _, err := k.Seal([]byte("x"), "a"); !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), Setting) {
		t.Fatalf("seal without a key: %v; want ErrNoKey naming %s", err, Setting)
	}
	empty, err := ParseKeys("")
	if err != nil || empty.Configured() {
		t.Fatalf("empty setting: %v, configured %v", err, empty.Configured())
	}
	for _, bad := range []string{"short:" + base64.StdEncoding.EncodeToString([]byte("abc")), "!!!", "a:" + key(1) + ",a:" + key(2)} {
		if _, err := ParseKeys(bad); err == nil || !strings.Contains(err.Error(), Setting) {
			t.Errorf("ParseKeys(%q) = %v; want an error naming %s", bad, err, Setting)
		}
	}
}
