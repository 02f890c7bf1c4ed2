package audit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Headers of a webhook delivery.
const (
	// SignatureHeader carries "t=UNIX_SECONDS,v1=HEX": v1 is the
	// HMAC-SHA256, keyed with the sink's secret, of the time stamp, a
	// period and the raw body ("1765090000.{...}"), in lowercase hex.
	SignatureHeader = "Switchboard-Signature"
	// EventIDHeader carries the Event's ID, the same on every retry.
	EventIDHeader = "Switchboard-Event-Id"
)

// DefaultTolerance is how old a signature's time stamp Verify accepts by
// default: a replay after it is refused.
const DefaultTolerance = 5 * time.Minute

// Sign is the SignatureHeader value of body sent at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret []byte, ts string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// ErrBadSignature is a delivery whose signature does not verify.
var ErrBadSignature = errors.New("audit webhook signature does not verify")

// Verify checks header (a SignatureHeader value) against body, as a
// receiver in Go would: the HMAC must match (compared in constant time)
// and the time stamp be within tolerance of now (0: DefaultTolerance).
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance == 0 {
		tolerance = DefaultTolerance
	}
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return fmt.Errorf("%w: %s must be t=UNIX_SECONDS,v1=HEX", ErrBadSignature, SignatureHeader)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: its time stamp is %s from now, past the %s tolerance", ErrBadSignature, d.Round(time.Second), tolerance)
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return ErrBadSignature
}
