package voice

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// OfflineOptions configure the offline engines.
type OfflineOptions struct {
	// Recognizer is Debian's pocketsphinx_continuous (package pocketsphinx,
	// with pocketsphinx-en-us for its model); default
	// "pocketsphinx_continuous" on PATH.
	Recognizer string
	// RecognizerArgs are added to every run (e.g. -hmm, -lm and -dict for
	// another language's model).
	RecognizerArgs []string
	// Synthesizer is espeak-ng (default "espeak-ng" on PATH).
	Synthesizer string
	// SynthesizerVoice is espeak-ng's -v (default: its own, en).
	SynthesizerVoice string
	// WordsPerMinute is espeak-ng's -s (default: its own, 175).
	WordsPerMinute int
	// PartialEvery is how much new audio a live utterance gathers before
	// the recogniser is run again over all of it for a partial transcript
	// (default 1 s; negative turns partials off).
	PartialEvery time.Duration
	// Decoder reads recordings that are not 16-bit WAV.
	Decoder Decoder
	Logger  *slog.Logger
}

func (o *OfflineOptions) validate() error {
	if o.Recognizer == "" {
		o.Recognizer = "pocketsphinx_continuous"
	}
	if o.Synthesizer == "" {
		o.Synthesizer = "espeak-ng"
	}
	if o.PartialEvery == 0 {
		o.PartialEvery = time.Second
	}
	if o.WordsPerMinute < 0 || (o.WordsPerMinute > 0 && (o.WordsPerMinute < 80 || o.WordsPerMinute > 450)) {
		return fmt.Errorf("voice offline: words_per_minute %d is outside 80..450", o.WordsPerMinute)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Offline is the offline backend: pocketsphinx hears, espeak-ng speaks,
// each a subprocess per utterance. It needs no network and no key, and it
// hears synthetic speech poorly; it is the demo and the test double with a
// real engine behind it.
type Offline struct {
	opts OfflineOptions
}

var (
	_ Transcriber = (*Offline)(nil)
	_ Speaker     = (*Offline)(nil)
)

// NewOffline checks the options; it does not look for the programs (Check
// does), so a service whose agents never speak starts without them.
func NewOffline(opts OfflineOptions) (*Offline, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Offline{opts: opts}, nil
}

// Check reports a missing program by the package that provides it.
func (o *Offline) Check() error {
	if _, err := exec.LookPath(o.opts.Recognizer); err != nil {
		return fmt.Errorf("voice offline: recognizer %q not found (Debian: apt-get install pocketsphinx pocketsphinx-en-us): %w", o.opts.Recognizer, err)
	}
	if _, err := exec.LookPath(o.opts.Synthesizer); err != nil {
		return fmt.Errorf("voice offline: synthesizer %q not found (Debian: apt-get install espeak-ng): %w", o.opts.Synthesizer, err)
	}
	return nil
}

// RecognizerCommand is the command line the offline transcriber runs for
// audio at the given rate, reading raw PCM from stdin. A WAV file at that
// rate given as infile instead of /dev/stdin is recognised the same way
// (pocketsphinx_continuous skips a .wav file's 44-byte header), which is
// how tests compare the pipeline with the engine alone.
func (o *Offline) RecognizerCommand(rate int, infile string) []string {
	args := []string{o.opts.Recognizer,
		"-infile", infile,
		"-samprate", strconv.Itoa(rate),
		"-nfft", strconv.Itoa(nfft(rate)),
		"-logfn", "/dev/null",
	}
	return append(args, o.opts.RecognizerArgs...)
}

// partialLevel is the level (dBFS) above which new audio is worth a
// partial transcript: the Endpointer's default threshold.
const partialLevel = -45

// nfft is the smallest power of two that holds pocketsphinx's analysis
// window (25.625 ms) at the rate: 512 at 16 kHz, 1024 at 22.05 kHz.
func nfft(rate int) int {
	need := int(float64(rate)*0.025625) + 1
	n := 256
	for n < need {
		n *= 2
	}
	return n
}

// recognizerRate is the rate audio is recognised at: the audio's own when
// the acoustic model (16 kHz) can read it (pocketsphinx computes its
// features at any rate ≥ 16 kHz with a matching FFT), else 16 kHz.
func recognizerRate(rate int) int {
	if rate >= 16000 && rate <= 48000 {
		return rate
	}
	return Speech.SampleRate
}

// Transcribe recognises a whole recording.
func (o *Offline) Transcribe(ctx context.Context, rec Recording) (Transcript, error) {
	f, pcm, err := o.opts.Decoder.Decode(ctx, rec)
	if err != nil {
		return Transcript{}, err
	}
	rate := recognizerRate(f.SampleRate)
	pcm = Resample(pcm, f.SampleRate, rate)
	text, err := o.recognize(ctx, rate, pcm)
	if err != nil {
		return Transcript{}, err
	}
	return Transcript{Text: text, Final: true, Audio: Format{SampleRate: rate, Channels: 1}.Duration(len(pcm))}, nil
}

func (o *Offline) recognize(ctx context.Context, rate int, pcm []byte) (string, error) {
	argv := o.RecognizerCommand(rate, "/dev/stdin")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(pcm)
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("voice offline: running %s: %w: %s", argv[0], err, tail(stderr.String()))
	}
	return JoinHypotheses(out.String()), nil
}

// JoinHypotheses turns pocketsphinx_continuous's output (one line per
// stretch of speech its own detector found) into one transcript: the
// non-empty lines, trimmed, joined by single spaces.
func JoinHypotheses(out string) string {
	var parts []string
	for _, line := range strings.Split(out, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, " ")
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		s = s[len(s)-300:]
	}
	return s
}

// Stream opens a live utterance. One recogniser process reads the PCM on
// its stdin as it arrives, so at the end of speech only the last stretch is
// left to decode; its output is the final transcript, the same as
// pocketsphinx_continuous prints for the whole utterance as a file. While
// the person speaks, the recogniser is run again over all the audio so far
// every PartialEvery of new audio: a partial is what the engine hears in
// that prefix.
func (o *Offline) Stream(ctx context.Context, f Format) (Stream, error) {
	if f.SampleRate <= 0 || f.Channels <= 0 {
		return nil, fmt.Errorf("voice offline: stream format %d Hz × %d channels", f.SampleRate, f.Channels)
	}
	rate := recognizerRate(f.SampleRate)
	ctx, cancel := context.WithCancel(ctx)
	argv := o.RecognizerCommand(rate, "/dev/stdin")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("voice offline: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("voice offline: %w", err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("voice offline: starting %s: %w", argv[0], err)
	}
	s := &offlineStream{
		o: o, in: f, rate: rate, cmd: cmd, stdin: stdin, stderr: &stderr,
		ctx: ctx, cancel: cancel,
		partialQueue: newPartialQueue(),
		lines:        make(chan []string, 1),
		kick:         make(chan struct{}, 1),
	}
	s.partCtx, s.partCancel = context.WithCancel(ctx)
	go s.read(stdout)
	if o.opts.PartialEvery > 0 {
		s.wg.Add(1)
		go s.partialLoop()
	}
	return s, nil
}

type offlineStream struct {
	o      *Offline
	in     Format
	rate   int
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *bytes.Buffer
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	rest     []byte // an incomplete input frame left from the last Write
	pcm      []byte // mono at the input rate
	sent     int    // how much of pcm went to the recogniser (resampled when rate differs)
	lastPart int    // len(pcm) at the last partial run
	voiced   bool   // speech-loud audio came since the last partial run
	finished bool
	closed   bool

	*partialQueue
	lines      chan []string // the live recogniser's lines, once it exits
	kick       chan struct{}
	partCtx    context.Context // partial runs, cancelled at Finish
	partCancel context.CancelFunc
	wg         sync.WaitGroup
}

func (s *offlineStream) read(r io.Reader) {
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	s.lines <- lines
}

func (s *offlineStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished || s.closed {
		return 0, errors.New("voice offline: write after the utterance ended")
	}
	frame := 2 * s.in.Channels
	buf := append(s.rest, p...)
	whole := len(buf) - len(buf)%frame
	s.rest = append([]byte(nil), buf[whole:]...)
	mono := Mono(s.in, buf[:whole])
	s.pcm = append(s.pcm, mono...)
	if Level(s.in, mono) > partialLevel {
		s.voiced = true
	}
	if err := s.feed(false); err != nil {
		return 0, err
	}
	// Quiet after the words adds nothing to hear: no run for it, and the
	// live recogniser has the CPU to itself when the end of speech comes.
	if s.o.opts.PartialEvery > 0 && s.voiced && s.in.Duration(len(s.pcm)-s.lastPart) >= s.o.opts.PartialEvery {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// feed sends the recogniser what it has not had yet. Audio at a rate the
// recogniser does not read is resampled at the end, in one piece, so the
// final transcript is the one Transcribe gives for the same audio.
func (s *offlineStream) feed(final bool) error {
	var pending []byte
	switch {
	case s.rate == s.in.SampleRate:
		pending = s.pcm[s.sent:]
	case final:
		pending = Resample(s.pcm[s.sent:], s.in.SampleRate, s.rate)
	}
	s.sent = len(s.pcm)
	if s.rate != s.in.SampleRate && !final {
		s.sent = 0
	}
	if len(pending) == 0 {
		return nil
	}
	if _, err := s.stdin.Write(pending); err != nil {
		return fmt.Errorf("voice offline: feeding the recogniser: %w", err)
	}
	return nil
}

func (s *offlineStream) partialLoop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.partCtx.Done():
			return
		case <-s.kick:
		}
		s.mu.Lock()
		if s.finished || s.closed {
			s.mu.Unlock()
			return
		}
		snapshot := append([]byte(nil), s.pcm...)
		s.lastPart, s.voiced = len(s.pcm), false
		s.mu.Unlock()
		pcm := Resample(snapshot, s.in.SampleRate, s.rate)
		text, err := s.o.recognize(s.partCtx, s.rate, pcm)
		if err != nil {
			if s.partCtx.Err() == nil {
				s.o.opts.Logger.WarnContext(s.ctx, "voice partial transcript failed", "error", err)
			}
			continue
		}
		s.publish(Transcript{Text: text, Audio: s.in.Duration(len(snapshot))})
	}
}

// Finish ends the utterance: the recogniser reads to the end of its input
// and prints the last stretch. A partial run still going is cancelled: the
// final transcript supersedes it.
func (s *offlineStream) Finish(ctx context.Context) (Transcript, error) {
	s.mu.Lock()
	if s.finished || s.closed {
		s.mu.Unlock()
		return Transcript{}, errors.New("voice offline: the utterance already ended")
	}
	s.finished = true
	err := s.feed(true)
	audio := s.in.Duration(len(s.pcm))
	s.mu.Unlock()
	// Stop partials first: a partial run competes for the CPU with the
	// final decode.
	s.stopPartials()
	if cerr := s.stdin.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("voice offline: %w", cerr)
	}
	if err != nil {
		s.cancel()
		<-s.lines
		_ = s.cmd.Wait()
		s.closePartials()
		return Transcript{}, err
	}
	var lines []string
	select {
	case lines = <-s.lines:
	case <-ctx.Done():
		s.cancel()
		<-s.lines
		_ = s.cmd.Wait()
		s.closePartials()
		return Transcript{}, ctx.Err()
	}
	werr := s.cmd.Wait()
	s.cancel()
	s.closePartials()
	if werr != nil {
		return Transcript{}, fmt.Errorf("voice offline: %s: %w: %s", s.cmd.Path, werr, tail(s.stderr.String()))
	}
	return Transcript{Text: JoinHypotheses(strings.Join(lines, "\n")), Final: true, Audio: audio}, nil
}

// stopPartials ends partialLoop, killing a run in flight, and waits for
// it.
func (s *offlineStream) stopPartials() {
	s.partCancel()
	s.wg.Wait()
}

func (s *offlineStream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	wasFinished := s.finished
	s.closed = true
	s.mu.Unlock()
	if wasFinished {
		return nil
	}
	s.stopPartials()
	s.cancel()
	_ = s.stdin.Close()
	<-s.lines
	_ = s.cmd.Wait()
	s.closePartials()
	return nil
}

// Speak runs espeak-ng over the text (given on its stdin, so no text is
// ever read as an option) and returns its WAV output as PCM (22.05 kHz
// mono for its default voices).
func (o *Offline) Speak(ctx context.Context, text string) (Audio, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Audio{Format: Format{SampleRate: 22050, Channels: 1}}, nil
	}
	args := []string{"--stdout"}
	if o.opts.SynthesizerVoice != "" {
		args = append(args, "-v", o.opts.SynthesizerVoice)
	}
	if o.opts.WordsPerMinute > 0 {
		args = append(args, "-s", strconv.Itoa(o.opts.WordsPerMinute))
	}
	cmd := exec.CommandContext(ctx, o.opts.Synthesizer, args...)
	cmd.Stdin = strings.NewReader(text)
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Audio{}, ctx.Err()
		}
		return Audio{}, fmt.Errorf("voice offline: running %s: %w: %s", o.opts.Synthesizer, err, tail(stderr.String()))
	}
	f, pcm, err := ParseWAV(out.Bytes())
	if err != nil {
		return Audio{}, fmt.Errorf("voice offline: reading %s's output: %w", o.opts.Synthesizer, err)
	}
	return Audio{Format: Format{SampleRate: f.SampleRate, Channels: 1}, PCM: Mono(f, pcm), Characters: utf8.RuneCountInString(text)}, nil
}
