package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/command/when"
	"github.com/switchboardhq/switchboard/core/tool"
	"github.com/switchboardhq/switchboard/store"
)

// Tool names.
const (
	ToolRemind         = "remind"
	ToolRoutineCreate  = "routine_create"
	ToolRoutineList    = "routine_list"
	ToolRoutineUpdate  = "routine_update"
	ToolRoutineDelete  = "routine_delete"
	ToolGoalStart      = "goal_start"
	ToolPulseReport    = "pulse_report"
	ToolReportProgress = "report_progress"
)

// RegisterTools adds the scheduler's agent tools to reg.
func (s *Scheduler) RegisterTools(reg *tool.Registry) error {
	regs := []error{
		tool.Register(reg, tool.Def{
			Name: ToolRemind,
			Description: "Set a reminder for the person you are talking with: at the time given, the text is sent to them " +
				"as a direct message. Give either in (a duration such as 20m, 2h, 1d) or at (2026-03-08T09:00:00-05:00, " +
				"\"15:30\", \"tomorrow 9:00\" in time_zone).",
			Risk: tool.RiskLow,
		}, s.toolRemind),
		tool.Register(reg, tool.Def{
			Name: ToolRoutineCreate,
			Description: fmt.Sprintf("Create a routine: a task you run on a schedule, each run in a conversation of its own, "+
				"delivered to a channel of this workspace or the owner's DM. Give every (30m, 4h, 1d) or cron "+
				"(\"0 8 * * 1-5\") with time_zone. At most %d routines per agent. Use template \"briefing\" for a digest card.",
				s.opts.MaxRoutinesPerAgent),
			Risk: tool.RiskMedium,
		}, s.toolRoutineCreate),
		tool.Register(reg, tool.Def{
			Name:        ToolRoutineList,
			Description: "List your routines, pulses, goal loops and pending reminders with their schedules and state.",
			Risk:        tool.RiskLow,
		}, s.toolRoutineList),
		tool.Register(reg, tool.Def{
			Name:        ToolRoutineUpdate,
			Description: "Change one of your routines: its schedule, instruction or channel, or pause / resume it.",
			Risk:        tool.RiskMedium,
		}, s.toolRoutineUpdate),
		tool.Register(reg, tool.Def{
			Name:        ToolRoutineDelete,
			Description: "Delete one of your routines for good.",
			Risk:        tool.RiskMedium,
		}, s.toolRoutineDelete),
		tool.Register(reg, tool.Def{
			Name: ToolGoalStart,
			Description: "Start a goal loop: you work on the goal in iterations (continuous, or every interval), each ending " +
				"with report_progress; the server stops the loop on completion, a block, or its limits (iterations, " +
				"tokens, deadline, no progress) and tells the owner.",
			Risk: tool.RiskMedium,
		}, s.toolGoalStart),
		tool.Register(reg, tool.Def{
			Name: ToolPulseReport,
			Description: "End a pulse (your scheduled check-in) with its structured report. Only a report with notify set " +
				"messages your owner. Only valid inside a pulse.",
			Risk: tool.RiskLow,
		}, s.pulseReport),
		tool.Register(reg, tool.Def{
			Name: ToolReportProgress,
			Description: "End a goal loop iteration with your progress: continue, complete, or blocked with what you need. " +
				"The server decides whether there is another iteration. Only valid inside a goal loop.",
			Risk: tool.RiskLow,
		}, s.reportProgress),
	}
	if err := errors.Join(regs...); err != nil {
		return fmt.Errorf("registering scheduler tools: %w", err)
	}
	return nil
}

// RunContext is the context of the conversations the scheduler starts:
// routine runs, pulses and loop iterations.
const RunContext = tool.ContextScheduler

// Offered leaves out of tools what a conversation of contextName cannot
// use: pulse_report and report_progress end a pulse or a loop iteration,
// so only the scheduler's own runs (RunContext) are offered them. Any other
// tool passes through.
func Offered(contextName tool.ContextName, tools []*tool.Tool) []*tool.Tool {
	if contextName == RunContext {
		return tools
	}
	out := make([]*tool.Tool, 0, len(tools))
	for _, t := range tools {
		if n := t.Name(); n != ToolPulseReport && n != ToolReportProgress {
			out = append(out, t)
		}
	}
	return out
}

// place is where a tool call happens: the agent, the person and the
// workspace the conversation belongs to.
type place struct {
	Agent   string
	Owner   string
	Channel string // the conversation's channel, "" when unknown
	Target
}

// placeOf resolves the calling conversation's place. A scheduled run's
// conversation belongs where its schedule does.
func (s *Scheduler) placeOf(ctx context.Context, req *tool.Request) (place, error) {
	if req.ConversationID == uuid.Nil {
		return place{}, errors.New("this tool can only be called by an agent in a conversation")
	}
	p := place{Agent: req.Agent, Owner: req.Starter}
	bs, err := s.st.BindingListByConversation(ctx, req.ConversationID)
	if err != nil {
		return place{}, fmt.Errorf("finding where this conversation is: %w", err)
	}
	for _, b := range bs {
		if b.Place.Platform == silentPlatform {
			continue
		}
		p.Platform, p.Workspace, p.Channel = b.Place.Platform, b.Place.Workspace, b.Place.Channel
		return p, nil
	}
	if run, err := s.st.ScheduleRunByConversation(ctx, req.ConversationID); err == nil {
		if sc, err := s.st.ScheduleGet(ctx, run.ScheduleID); err == nil {
			p.Platform, p.Workspace = sc.Place.Platform, sc.Place.Workspace
			if p.Owner == "" {
				p.Owner = sc.Owner
			}
			return p, nil
		}
	}
	return place{}, errors.New("this conversation is not on a chat platform, so there is nowhere to deliver to")
}

// RemindInput is the remind tool's input.
type RemindInput struct {
	Text     string `json:"text" jsonschema:"what to remind them of, as it should read"`
	In       string `json:"in,omitempty" jsonschema:"after how long: 20m, 2h, 1d"`
	At       string `json:"at,omitempty" jsonschema:"when: RFC 3339, HH:MM, or tomorrow HH:MM"`
	TimeZone string `json:"time_zone,omitempty" jsonschema:"IANA time zone for at, such as Europe/Paris; default the person's own zone, else UTC"`
}

// RemindOutput is what remind answers.
type RemindOutput struct {
	Reminder string `json:"reminder"`
	At       string `json:"at"`
}

func (s *Scheduler) toolRemind(ctx context.Context, req *tool.Request, in RemindInput) (RemindOutput, error) {
	pl, err := s.placeOf(ctx, req)
	if err != nil {
		return RemindOutput{}, err
	}
	if pl.Owner == "" {
		return RemindOutput{}, errors.New("nobody to remind: this conversation has no person who started it")
	}
	at := in.At
	if in.In != "" {
		if in.At != "" {
			return RemindOutput{}, errors.New("give in or at, not both")
		}
		at = "in " + in.In
	}
	tz := in.TimeZone
	if tz == "" {
		if tz, err = s.personZone(ctx, pl); err != nil {
			return RemindOutput{}, err
		}
	}
	due, err := when.Parse(at, s.now(), tz)
	if err != nil {
		return RemindOutput{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	sc, err := s.Remind(ctx, RemindParams{
		Agent: pl.Agent, Owner: pl.Owner, Platform: pl.Platform, Workspace: pl.Workspace,
		At: due, Text: in.Text, TimeZone: tz, Source: "tool",
	})
	if err != nil {
		return RemindOutput{}, err
	}
	return RemindOutput{Reminder: sc.Name, At: localTime(*sc.NextRunAt, sc.TimeZone)}, nil
}

// personZone is the time zone of the person a reminder is for, as their
// platform profile gave it; "" (UTC) for someone the store does not know
// or whose platform shares no zone.
func (s *Scheduler) personZone(ctx context.Context, pl place) (string, error) {
	p, err := s.st.PersonFind(ctx, &store.PersonFindParams{Identity: core.IdentityOf(pl.Platform, pl.Workspace, pl.Owner)})
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("finding the time zone of %s: %w", pl.Owner, err)
	}
	return p.TimeZone, nil
}

// RoutineInput is routine_create's input.
type RoutineInput struct {
	Name        string `json:"name" jsonschema:"short id: lowercase letters, digits, - and _"`
	Instruction string `json:"instruction" jsonschema:"what to do on each run"`
	Every       string `json:"every,omitempty" jsonschema:"interval: 30m, 4h, 1d"`
	Cron        string `json:"cron,omitempty" jsonschema:"five-field cron line, such as 0 8 * * 1-5"`
	TimeZone    string `json:"time_zone,omitempty" jsonschema:"IANA time zone for cron, such as America/New_York; default UTC"`
	Deliver     string `json:"deliver,omitempty" jsonschema:"here (this channel, the default), dm (the owner's DM) or a channel id of this workspace"`
	Template    string `json:"template,omitempty" jsonschema:"post each run as a card of this template, such as briefing"`
}

// ScheduleOutput describes a schedule to the model.
type ScheduleOutput struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Summary string `json:"summary"`
}

func outputOf(sc *store.Schedule) ScheduleOutput {
	return ScheduleOutput{Name: sc.Name, Kind: string(sc.Kind), Summary: Describe(sc)}
}

func specOf(every, cron string) (string, error) {
	switch {
	case every != "" && cron != "":
		return "", errors.New("give every or cron, not both")
	case every != "":
		return "every " + every, nil
	case cron != "":
		return "cron " + cron, nil
	}
	return "", errors.New("give every (such as 4h) or cron (such as 0 8 * * 1-5)")
}

// DeliverTo resolves a deliver argument ("here", "dm" or a channel id) to
// a channel: here is the channel the request came from ("" in a DM), and
// "" means the owner's DM. Agent tools and typed commands read it alike.
func DeliverTo(here, deliver string) string {
	switch strings.ToLower(strings.TrimSpace(deliver)) {
	case "", "here":
		return here // "" when the request came from a DM: deliver to the DM
	case "dm":
		return ""
	}
	return strings.TrimPrefix(strings.TrimSpace(deliver), "#")
}

func (s *Scheduler) toolRoutineCreate(ctx context.Context, req *tool.Request, in RoutineInput) (ScheduleOutput, error) {
	pl, err := s.placeOf(ctx, req)
	if err != nil {
		return ScheduleOutput{}, err
	}
	spec, err := specOf(in.Every, in.Cron)
	if err != nil {
		return ScheduleOutput{}, err
	}
	channel := DeliverTo(pl.Channel, in.Deliver)
	sc, err := s.CreateSchedule(ctx, ScheduleParams{
		Kind: store.ScheduleRoutine, Agent: pl.Agent, Name: in.Name, Owner: pl.Owner,
		Target: Target{Platform: pl.Platform, Workspace: pl.Workspace, Channel: channel},
		Spec:   spec, TimeZone: in.TimeZone, Instruction: in.Instruction, Template: in.Template, Source: "tool",
	})
	if err != nil {
		return ScheduleOutput{}, err
	}
	return outputOf(sc), nil
}

// ListInput is routine_list's input.
type ListInput struct{}

// ListOutput is routine_list's answer.
type ListOutput struct {
	Schedules []ScheduleOutput `json:"schedules"`
}

func (s *Scheduler) toolRoutineList(ctx context.Context, req *tool.Request, _ ListInput) (ListOutput, error) {
	if req.Agent == "" {
		return ListOutput{}, errors.New("routine_list can only be called by an agent")
	}
	list, err := s.List(ctx, req.Agent, "")
	if err != nil {
		return ListOutput{}, err
	}
	out := ListOutput{Schedules: []ScheduleOutput{}}
	for _, sc := range list {
		out.Schedules = append(out.Schedules, outputOf(sc))
	}
	return out, nil
}

// RoutineUpdateInput is routine_update's input.
type RoutineUpdateInput struct {
	Name        string `json:"name"`
	Instruction string `json:"instruction,omitempty"`
	Every       string `json:"every,omitempty"`
	Cron        string `json:"cron,omitempty"`
	TimeZone    string `json:"time_zone,omitempty"`
	Deliver     string `json:"deliver,omitempty" jsonschema:"here, dm or a channel id of this workspace"`
	Paused      *bool  `json:"paused,omitempty" jsonschema:"true to pause, false to resume"`
}

func (s *Scheduler) toolRoutineUpdate(ctx context.Context, req *tool.Request, in RoutineUpdateInput) (ScheduleOutput, error) {
	pl, err := s.placeOf(ctx, req)
	if err != nil {
		return ScheduleOutput{}, err
	}
	sc, err := s.Find(ctx, pl.Agent, store.ScheduleRoutine, in.Name)
	if err != nil {
		return ScheduleOutput{}, err
	}
	var c Change
	if in.Instruction != "" {
		c.Instruction = &in.Instruction
	}
	if in.Every != "" || in.Cron != "" {
		spec, err := specOf(in.Every, in.Cron)
		if err != nil {
			return ScheduleOutput{}, err
		}
		c.Spec = &spec
	}
	if in.TimeZone != "" {
		c.TimeZone = &in.TimeZone
	}
	if in.Deliver != "" {
		ch := DeliverTo(pl.Channel, in.Deliver)
		c.Channel = &ch
	}
	if c != (Change{}) {
		if sc, err = s.Update(ctx, sc, c); err != nil {
			return ScheduleOutput{}, err
		}
	}
	if in.Paused != nil {
		if *in.Paused && sc.State == store.ScheduleActive {
			sc, err = s.Pause(ctx, sc, "paused by the agent")
		} else if !*in.Paused && sc.State == store.SchedulePaused {
			sc, err = s.Resume(ctx, sc)
		}
		if err != nil {
			return ScheduleOutput{}, err
		}
	}
	return outputOf(sc), nil
}

// NameInput names one of the agent's schedules.
type NameInput struct {
	Name string `json:"name"`
}

// DeletedOutput confirms a deletion.
type DeletedOutput struct {
	Deleted string `json:"deleted"`
}

func (s *Scheduler) toolRoutineDelete(ctx context.Context, req *tool.Request, in NameInput) (DeletedOutput, error) {
	if req.Agent == "" {
		return DeletedOutput{}, errors.New("routine_delete can only be called by an agent")
	}
	sc, err := s.Find(ctx, req.Agent, store.ScheduleRoutine, in.Name)
	if err != nil {
		return DeletedOutput{}, err
	}
	if err := s.Delete(ctx, sc); err != nil {
		return DeletedOutput{}, err
	}
	return DeletedOutput{Deleted: sc.Name}, nil
}

// GoalInput is goal_start's input.
type GoalInput struct {
	Name          string `json:"name"`
	Goal          string `json:"goal" jsonschema:"the outcome to reach, specific enough to tell when it is complete"`
	Every         string `json:"every,omitempty" jsonschema:"pause between iterations (30m, 4h); empty runs continuously"`
	MaxIterations int    `json:"max_iterations,omitempty"`
	TokenBudget   int64  `json:"token_budget,omitempty"`
	Deadline      string `json:"deadline,omitempty" jsonschema:"RFC 3339 instant after which the loop stops"`
}

func (s *Scheduler) toolGoalStart(ctx context.Context, req *tool.Request, in GoalInput) (ScheduleOutput, error) {
	pl, err := s.placeOf(ctx, req)
	if err != nil {
		return ScheduleOutput{}, err
	}
	lc := LoopConfig{MaxIterations: in.MaxIterations, TokenBudget: in.TokenBudget}
	if in.Deadline != "" {
		t, err := time.Parse(time.RFC3339, in.Deadline)
		if err != nil {
			return ScheduleOutput{}, fmt.Errorf("deadline %q must be RFC 3339", in.Deadline)
		}
		lc.Deadline = &t
	}
	spec := "continuous"
	if in.Every != "" {
		spec = "every " + in.Every
	}
	sc, err := s.CreateSchedule(ctx, ScheduleParams{
		Kind: store.ScheduleLoop, Agent: pl.Agent, Name: in.Name, Owner: pl.Owner,
		Target: Target{Platform: pl.Platform, Workspace: pl.Workspace, Channel: pl.Channel},
		Spec:   spec, Instruction: in.Goal, Loop: &lc, Source: "tool",
	})
	if err != nil {
		return ScheduleOutput{}, err
	}
	return outputOf(sc), nil
}
