package voice

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"
)

func noise(f Format, d time.Duration, amp float64, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	n := int(d.Seconds() * float64(f.SampleRate))
	out := make([]byte, 0, 2*n)
	for i := 0; i < n; i++ {
		out = binary.LittleEndian.AppendUint16(out, uint16(int16(amp*32767*(2*r.Float64()-1))))
	}
	return out
}

func mix(a, b []byte) []byte {
	out := make([]byte, len(a))
	for i := 0; i+1 < len(a); i += 2 {
		v := int(int16(binary.LittleEndian.Uint16(a[i:])))
		if i+1 < len(b) {
			v += int(int16(binary.LittleEndian.Uint16(b[i:])))
		}
		binary.LittleEndian.PutUint16(out[i:], uint16(clamp16(float64(v))))
	}
	return out
}

func TestEndpointer(t *testing.T) {
	for _, c := range []struct {
		name  string
		chunk int // bytes fed at a time
		bg    float64
	}{
		{"silence, whole", 1 << 20, 0},
		{"silence, odd chunks", 333, 0},
		{"room noise, 20 ms chunks", 640, 0.004},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := NewEndpointer(EndpointOptions{Silence: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			// 1 s quiet, a 50 ms click, 1 s quiet, 1.2 s speech-loud tone,
			// 1 s quiet.
			var audio []byte
			audio = append(audio, noise(Speech, time.Second, c.bg, 1)...)
			audio = append(audio, mix(tone(Speech, 1000, 50*time.Millisecond, 0.5), noise(Speech, 50*time.Millisecond, c.bg, 2))...)
			audio = append(audio, noise(Speech, 950*time.Millisecond, c.bg, 3)...)
			audio = append(audio, mix(tone(Speech, 220, 1200*time.Millisecond, 0.3), noise(Speech, 1200*time.Millisecond, c.bg, 4))...)
			audio = append(audio, noise(Speech, time.Second, c.bg, 5)...)
			var got []EndpointEvent
			for i := 0; i < len(audio); i += c.chunk {
				got = append(got, e.Feed(audio[i:min(i+c.chunk, len(audio))])...)
			}
			if len(got) != 2 || got[0].Kind != SpeechStart || got[1].Kind != SpeechEnd {
				t.Fatalf("events %+v, want one start and one end (the click is not speech)", got)
			}
			if d := got[0].At - 2*time.Second; d < -20*time.Millisecond || d > 20*time.Millisecond {
				t.Fatalf("speech started at %s, want 2s", got[0].At)
			}
			// Speech stops at 3.2 s; the end is called 500 ms of quiet later.
			if d := got[1].At - 3700*time.Millisecond; d < -20*time.Millisecond || d > 40*time.Millisecond {
				t.Fatalf("speech ended at %s, want 3.7s", got[1].At)
			}
			if e.Speaking() {
				t.Fatal("still speaking after the end")
			}
		})
	}
}

func TestEndpointOptionsValidate(t *testing.T) {
	if _, err := NewEndpointer(EndpointOptions{Threshold: 3}); err == nil {
		t.Fatal("a positive threshold was accepted")
	}
	if _, err := NewEndpointer(EndpointOptions{Frame: time.Second}); err == nil {
		t.Fatal("a 1 s frame was accepted")
	}
}
