package scheduler

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// A pulse is an agent's own check-in. It is cheap by design:
//
//   - Each checklist item may name a source. An InputFunc registered under
//     that name returns the source's current content; the pulse hashes
//     every item's content together with the checklist and the instruction.
//   - When the combined hash equals the one of the last pulse that finished,
//     nothing changed: the run is recorded as skipped and no model is
//     called.
//   - Otherwise the agent (or the cheaper agent named by run_as) runs one
//     turn in a conversation nobody sees and ends it with pulse_report. Only
//     a report with notify set reaches the owner, as a DM.
//
// Items without a source are plain instructions: they do not change the
// hash. A pulse made only of those runs once and then only when its
// checklist is edited; give it a "day" item to run once a day.

// PulseConfig is a pulse's Config.
type PulseConfig struct {
	Checklist   []ChecklistItem `json:"checklist" yaml:"checklist"`
	ActiveHours *ActiveHours    `json:"active_hours,omitempty" yaml:"active_hours,omitempty"`
	// RunAs names another declared agent to run the pulse turn, typically
	// one on a cheaper model with the same persona. Empty: the pulse's agent.
	RunAs string `json:"run_as,omitempty" yaml:"run_as,omitempty"`
}

// InputRequest is what an InputFunc is asked for.
type InputRequest struct {
	Schedule *store.Schedule
	Item     ChecklistItem
	Now      time.Time
	Location *time.Location
}

// InputFunc returns the current content of a pulse checklist source. Only
// its hash is kept; the content is shown to the model when the pulse runs.
// It must be deterministic for unchanged input: a timestamp in the output
// makes every pulse call the model.
type InputFunc func(ctx context.Context, in InputRequest) (string, error)

// builtinInputs are the sources every scheduler has.
func builtinInputs() map[string]InputFunc {
	return map[string]InputFunc{
		// "day": changes once a day (local date): a daily look.
		"day": func(_ context.Context, in InputRequest) (string, error) {
			return in.Now.In(in.Location).Format("2006-01-02 (Monday)"), nil
		},
		// "hour": changes every hour.
		"hour": func(_ context.Context, in InputRequest) (string, error) {
			return in.Now.In(in.Location).Format("2006-01-02 15:00"), nil
		},
		// "text": the item's Arg itself, for inputs written into the config.
		"text": func(_ context.Context, in InputRequest) (string, error) { return in.Item.Arg, nil },
	}
}

// toolNamePattern is what a tool name looks like (tool.Def.Name).
var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

var weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

func parseClock(s string) (int, error) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, fmt.Errorf("time of day %q: want HH:MM", s)
	}
	return t.Hour()*60 + t.Minute(), nil
}

// validateHours checks the hours.
func validateHours(h *ActiveHours) error {
	if _, err := parseClock(h.Start); err != nil {
		return fmt.Errorf("active_hours.start: %w", err)
	}
	if _, err := parseClock(h.End); err != nil {
		return fmt.Errorf("active_hours.end: %w", err)
	}
	for _, d := range h.Days {
		if _, ok := weekdays[strings.ToLower(d)]; !ok {
			return fmt.Errorf("active_hours.days: %q is not one of mon, tue, wed, thu, fri, sat, sun", d)
		}
	}
	return nil
}

// withinHours reports whether t (in loc) falls within the hours.
func withinHours(h *ActiveHours, t time.Time, loc *time.Location) bool {
	t = t.In(loc)
	if len(h.Days) > 0 && !slices.ContainsFunc(h.Days, func(d string) bool { return weekdays[strings.ToLower(d)] == t.Weekday() }) {
		return false
	}
	start, _ := parseClock(h.Start)
	end, _ := parseClock(h.End)
	m := t.Hour()*60 + t.Minute()
	if start <= end {
		return m >= start && m < end
	}
	return m >= start || m < end
}

// Validate checks a pulse's config against the sources known to s.
func (c *PulseConfig) validate(inputs map[string]InputFunc) error {
	if len(c.Checklist) == 0 {
		return errors.New("a pulse needs a checklist of at least one item")
	}
	for i, it := range c.Checklist {
		if strings.TrimSpace(it.Item) == "" {
			return fmt.Errorf("checklist[%d].item is empty", i)
		}
		if it.Source != "" && it.Tool != "" {
			return fmt.Errorf("checklist[%d]: give source or tool, not both", i)
		}
		if it.Tool != "" && !toolNamePattern.MatchString(it.Tool) {
			return fmt.Errorf("checklist[%d].tool %q is not a tool name", i, it.Tool)
		}
		if it.Source != "" {
			if _, ok := inputs[it.Source]; !ok {
				return fmt.Errorf("checklist[%d].source %q is not a registered input (have %s)", i, it.Source, strings.Join(sortedKeys(inputs), ", "))
			}
		}
	}
	if c.ActiveHours != nil {
		if err := validateHours(c.ActiveHours); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// pulseData is a pulse's Data.
type pulseData struct {
	// LastHash is the input hash of the last pulse whose turn finished.
	LastHash string `json:"last_hash,omitempty"`
}

// gathered is one checklist item with its current content.
type gathered struct {
	ChecklistItem
	Content string
}

// pulseInputs gathers every item's content and the combined hash.
func (s *Scheduler) pulseInputs(ctx context.Context, sc *store.Schedule, cfg *PulseConfig, now time.Time) ([]gathered, string, error) {
	loc, err := loadLocation(sc.TimeZone)
	if err != nil {
		return nil, "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "instruction\x00%s\x00", sc.Instruction)
	out := make([]gathered, 0, len(cfg.Checklist))
	for i, it := range cfg.Checklist {
		g := gathered{ChecklistItem: it}
		fmt.Fprintf(h, "item\x00%s\x00%s\x00%s\x00", it.Item, it.Source, it.Arg)
		if it.Tool != "" {
			args, _ := json.Marshal(it.Args) // map keys sorted: a stable encoding
			fmt.Fprintf(h, "tool\x00%s\x00%s\x00", it.Tool, args)
			content, err := s.toolInput(ctx, sc, it)
			if err != nil {
				return nil, "", fmt.Errorf("reading tool %s of checklist[%d]: %w", it.Tool, i, err)
			}
			sum := sha256.Sum256([]byte(content))
			h.Write(sum[:])
			g.Content = content
		}
		if it.Source != "" {
			f, ok := s.inputs[it.Source]
			if !ok {
				return nil, "", fmt.Errorf("checklist[%d]: no input named %q", i, it.Source)
			}
			content, err := f(ctx, InputRequest{Schedule: sc, Item: it, Now: now, Location: loc})
			if err != nil {
				return nil, "", fmt.Errorf("reading input %q of checklist[%d]: %w", it.Source, i, err)
			}
			sum := sha256.Sum256([]byte(content))
			h.Write(sum[:])
			g.Content = content
		}
		out = append(out, g)
	}
	return out, hex.EncodeToString(h.Sum(nil)), nil
}

func (s *Scheduler) runPulse(ctx context.Context, sc *store.Schedule, p fireArgs, key string) error {
	var cfg PulseConfig
	if err := json.Unmarshal(sc.Config, &cfg); err != nil {
		return fmt.Errorf("decoding pulse %s config: %w", sc.ID, err)
	}
	var data pulseData
	if err := json.Unmarshal(sc.Data, &data); err != nil {
		return fmt.Errorf("decoding pulse %s data: %w", sc.ID, err)
	}
	now := s.now()
	skip := func(hash, note string) error {
		_, err := s.st.ScheduleRunCreate(ctx, &store.ScheduleRunCreateParams{
			ScheduleID: sc.ID, DueAt: p.Due, Status: store.RunSkipped, InputHash: hash, Note: note, Now: now,
		})
		return err
	}
	if cfg.ActiveHours != nil {
		loc, err := loadLocation(sc.TimeZone)
		if err != nil {
			return err
		}
		if !withinHours(cfg.ActiveHours, p.Due, loc) {
			return skip("", "outside active hours")
		}
	}
	items, hash, err := s.pulseInputs(ctx, sc, &cfg, now)
	if err != nil {
		return err
	}
	if hash == data.LastHash {
		s.log.DebugContext(ctx, "pulse inputs unchanged; no model call", "schedule_id", sc.ID)
		return skip(hash, "inputs unchanged since the last pulse")
	}
	agentName := sc.Agent
	if cfg.RunAs != "" {
		agentName = cfg.RunAs
	}
	run, err := s.startRun(ctx, sc, p, key, core.StartConversationParams{
		Agent: agentName, Context: tool.ContextScheduler,
		Place:   store.Place{Platform: silentPlatform, Workspace: sc.Place.Workspace, Channel: "pulse:" + sc.ID.String()},
		Starter: sc.Owner, Text: pulseText(sc, items, p),
	}, hash)
	if err != nil {
		return err
	}
	return s.st.InTx(ctx, func(q store.Queries) error { return enqueueAfterRun(ctx, q, run, 0, now, now) })
}

func pulseText(sc *store.Schedule, items []gathered, p fireArgs) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Pulse %q at %s. This is your own check-in; nobody sees this conversation. ", sc.Name, localTime(p.Due, sc.TimeZone))
	b.WriteString("Go through the checklist, then call pulse_report exactly once. Set notify only when something " +
		"is worth interrupting your owner for, and put what they need to know in message.\n")
	if sc.Instruction != "" {
		b.WriteString("\n" + sc.Instruction + "\n")
	}
	b.WriteString("\nChecklist:\n")
	for i, it := range items {
		fmt.Fprintf(&b, "%d. %s\n", i+1, it.Item)
		if it.Source != "" || it.Tool != "" {
			content := it.Content
			if r := []rune(content); len(r) > 4000 {
				content = string(r[:4000]) + "…"
			}
			fmt.Fprintf(&b, "   Current %s input:\n   %s\n", cmp.Or(it.Source, it.Tool), strings.ReplaceAll(content, "\n", "\n   "))
		}
	}
	return b.String()
}

// afterPulse remembers the inputs of a pulse whose turn finished, so the
// next pulse with the same inputs makes no model call. A turn that failed
// is not remembered: the next pulse tries again.
func (s *Scheduler) afterPulse(ctx context.Context, sc *store.Schedule, run *store.ScheduleRun, failed bool) error {
	now := s.now()
	if failed {
		status, note := store.RunFailed, "the pulse turn failed"
		if run.Status == store.RunReported {
			status = store.RunReported
		}
		_, err := s.st.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: run.ID, Status: &status, Note: &note, Now: now})
		return err
	}
	var data pulseData
	if err := json.Unmarshal(sc.Data, &data); err != nil {
		return fmt.Errorf("decoding pulse %s data: %w", sc.ID, err)
	}
	data.LastHash = run.InputHash
	if _, err := s.st.ScheduleUpdate(ctx, &store.ScheduleUpdateParams{ID: sc.ID, Data: mustJSON(data), Now: now}); err != nil {
		return fmt.Errorf("remembering pulse %s inputs: %w", sc.ID, err)
	}
	if run.Status == store.RunStarted {
		status, note := store.RunFinished, "ended without pulse_report"
		_, err := s.st.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: run.ID, Status: &status, Note: &note, Now: now})
		return err
	}
	return nil
}

// PulseReport is the structured report a pulse turn ends with.
type PulseReport struct {
	Status  string `json:"status" jsonschema:"ok when nothing needs attention, attention otherwise"`
	Summary string `json:"summary" jsonschema:"one or two sentences on what you checked and found"`
	// Notify is the only way a pulse reaches the owner.
	Notify  bool             `json:"notify,omitempty" jsonschema:"true only when the owner should be interrupted now"`
	Message string           `json:"message,omitempty" jsonschema:"what to tell the owner when notify is true"`
	Items   []PulseItemCheck `json:"items,omitempty" jsonschema:"the checklist items you looked at"`
}

// PulseItemCheck is one checklist item's outcome.
type PulseItemCheck struct {
	Item   string `json:"item"`
	Status string `json:"status" jsonschema:"ok or attention"`
	Note   string `json:"note,omitempty"`
}

// PulseReportResult is what the model gets back.
type PulseReportResult struct {
	Recorded bool   `json:"recorded"`
	Notified bool   `json:"notified"`
	Note     string `json:"note,omitempty"`
}

// pulseReport is the pulse_report tool handler.
func (s *Scheduler) pulseReport(ctx context.Context, req *tool.Request, in PulseReport) (PulseReportResult, error) {
	sc, run, err := s.runOfCall(ctx, req, store.SchedulePulse, "pulse_report")
	if err != nil {
		return PulseReportResult{}, err
	}
	if in.Notify && strings.TrimSpace(in.Message) == "" {
		return PulseReportResult{}, errors.New("notify is set but message is empty: say what the owner should know")
	}
	now := s.now()
	notified := false
	err = s.st.InTx(ctx, func(q store.Queries) error {
		status := store.RunReported
		if _, err := q.ScheduleRunUpdate(ctx, &store.ScheduleRunUpdateParams{ID: run.ID, Status: &status, Report: mustJSON(in), Now: now}); err != nil {
			return err
		}
		if !in.Notify {
			return nil
		}
		notified = true
		return s.notifyOwner(ctx, q, sc, fmt.Sprintf("pulse-%s", run.ID), in.Message, now)
	})
	if err != nil {
		return PulseReportResult{}, fmt.Errorf("recording the pulse report: %w", err)
	}
	res := PulseReportResult{Recorded: true, Notified: notified}
	if !notified {
		res.Note = "nothing was sent to the owner"
	}
	return res, nil
}

// runOfCall finds the schedule run the calling tool's conversation belongs
// to, checking that it is of kind.
func (s *Scheduler) runOfCall(ctx context.Context, req *tool.Request, kind store.ScheduleKind, toolName string) (*store.Schedule, *store.ScheduleRun, error) {
	if req.ConversationID == uuid.Nil {
		return nil, nil, fmt.Errorf("%s can only be called by an agent in a conversation", toolName)
	}
	run, err := s.st.ScheduleRunByConversation(ctx, req.ConversationID)
	if errors.Is(err, store.ErrNotFound) {
		// The turn may run before its run learnt its conversation: the
		// binding's thread names the occurrence.
		run, err = s.runOfBinding(ctx, req.ConversationID)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("finding the %s run: %w", kind, err)
	}
	if run == nil {
		return nil, nil, fmt.Errorf("%s is only for %s runs, and this conversation is not one", toolName, kind)
	}
	sc, err := s.st.ScheduleGet(ctx, run.ScheduleID)
	if err != nil {
		return nil, nil, fmt.Errorf("finding the %s of this run: %w", kind, err)
	}
	if sc.Kind != kind {
		return nil, nil, fmt.Errorf("%s is only for %s runs, and this conversation is a %s run", toolName, kind, sc.Kind)
	}
	return sc, run, nil
}

// runOfBinding finds a run through its conversation's silent binding; nil
// when the conversation is not a run's.
func (s *Scheduler) runOfBinding(ctx context.Context, conv uuid.UUID) (*store.ScheduleRun, error) {
	bs, err := s.st.BindingListByConversation(ctx, conv)
	if err != nil {
		return nil, err
	}
	for _, b := range bs {
		if b.Place.Platform != silentPlatform {
			continue
		}
		if p, ok := parseRunKey(b.Place.Run); ok {
			return s.runAt(ctx, p.ScheduleID, p.Due, p.Iteration)
		}
	}
	return nil, nil
}
