package store

import (
	"context"
	"fmt"
	"strings"
)

func checkInstanceLease(id, holder string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return invalidf("empty InstanceID")
	case strings.TrimSpace(holder) == "":
		return invalidf("empty Holder")
	}
	return nil
}

func (q checked) InstanceLeaseAcquire(ctx context.Context, p *InstanceLeaseAcquireParams) (*InstanceLease, error) {
	if p == nil {
		return nil, fmt.Errorf("acquiring an instance lease: %w", invalidf("no params"))
	}
	if err := checkInstanceLease(p.InstanceID, p.Holder); err != nil {
		return nil, fmt.Errorf("acquiring an instance lease: %w", err)
	}
	if p.TTL <= 0 {
		return nil, fmt.Errorf("acquiring the lease of instance %s: %w", p.InstanceID, invalidf("TTL %s must be positive", p.TTL))
	}
	c := *p
	c.Now = q.at(c.Now)
	if c.StartedAt.IsZero() {
		c.StartedAt = c.Now
	}
	return q.Queries.InstanceLeaseAcquire(ctx, &c)
}

func (q checked) InstanceLeaseGet(ctx context.Context, instanceID string) (*InstanceLease, error) {
	if strings.TrimSpace(instanceID) == "" {
		return nil, fmt.Errorf("reading an instance lease: %w", invalidf("empty InstanceID"))
	}
	return q.Queries.InstanceLeaseGet(ctx, instanceID)
}

func (q checked) InstanceLeaseHeartbeat(ctx context.Context, p *InstanceLeaseParams) (*InstanceLease, error) {
	if p == nil {
		return nil, fmt.Errorf("renewing an instance lease: %w", invalidf("no params"))
	}
	if err := checkInstanceLease(p.InstanceID, p.Holder); err != nil {
		return nil, fmt.Errorf("renewing an instance lease: %w", err)
	}
	if p.TTL <= 0 {
		return nil, fmt.Errorf("renewing the lease of instance %s: %w", p.InstanceID, invalidf("TTL %s must be positive", p.TTL))
	}
	c := *p
	c.Now = q.at(c.Now)
	return q.Queries.InstanceLeaseHeartbeat(ctx, &c)
}

func (q checked) InstanceLeaseRelease(ctx context.Context, p *InstanceLeaseParams) error {
	if p == nil {
		return fmt.Errorf("releasing an instance lease: %w", invalidf("no params"))
	}
	if err := checkInstanceLease(p.InstanceID, p.Holder); err != nil {
		return fmt.Errorf("releasing an instance lease: %w", err)
	}
	return q.Queries.InstanceLeaseRelease(ctx, p)
}

func (q checked) InstanceLeasePrune(ctx context.Context, p *PruneParams) (int, error) {
	c, err := q.prune("instance leases", p)
	if err != nil {
		return 0, err
	}
	return q.Queries.InstanceLeasePrune(ctx, c)
}
