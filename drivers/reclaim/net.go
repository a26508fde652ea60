package reclaim

import (
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"

	"faultwin/internal/model"
	"faultwin/snapshots/host"
)

// deleteLinks deletes the host links whose names the description claims.
func deleteLinks(globs []string, r *model.Reclaim, fail func(string, ...any)) {
	if len(globs) == 0 {
		return
	}
	links, err := netlink.LinkList()
	if err != nil {
		fail("links: %v", err)
		return
	}
	// Only bridges the globs claim, and ports of those bridges: a veth of
	// some other software never matches by its name alone.
	claimed := map[int]bool{}
	for _, l := range links {
		if a := l.Attrs(); a != nil && l.Type() == "bridge" && matchAny(globs, a.Name) {
			claimed[a.Index] = true
		}
	}
	// Ports first: the bridge is then free to go.
	for pass := 0; pass < 2; pass++ {
		for _, l := range links {
			a := l.Attrs()
			if a == nil || !matchAny(globs, a.Name) || (pass == 0) == (l.Type() == "bridge") {
				continue
			}
			if l.Type() != "bridge" && !claimed[a.MasterIndex] {
				fail("link %s left: not a port of a claimed bridge", a.Name)
				continue
			}
			if err := netlink.LinkDel(l); err != nil {
				if _, gone := netlink.LinkByName(a.Name); gone != nil {
					continue // went with its peer
				}
				fail("link %s: %v", a.Name, err)
				continue
			}
			r.LinksDeleted = append(r.LinksDeleted, a.Name)
		}
	}
}

// deleteChains deletes the chains of host tables whose names the
// description claims, with every rule that jumps to them, then the listed
// tables once no rule is left in them.
func deleteChains(globs, emptyTables []string, r *model.Reclaim, fail func(string, ...any)) {
	if len(globs) == 0 && len(emptyTables) == 0 {
		return
	}
	conn, err := nftables.New()
	if err != nil {
		fail("nftables: %v", err)
		return
	}
	chains, err := conn.ListChains()
	if err != nil {
		fail("chains: %v", err)
		return
	}
	name := func(c *nftables.Chain) string {
		return host.FamilyName(c.Table.Family) + " " + c.Table.Name + " " + c.Name
	}
	var doomed []*nftables.Chain
	for _, c := range chains {
		if matchAny(globs, c.Name) {
			doomed = append(doomed, c)
		}
	}
	for _, c := range chains {
		rules, err := conn.GetRules(c.Table, c)
		if err != nil {
			fail("rules of %s: %v", name(c), err)
			continue
		}
		for _, rule := range rules {
			if target := jumpTarget(rule); target != "" && matchAny(globs, target) && !matchAny(globs, c.Name) {
				if err := conn.DelRule(rule); err != nil {
					fail("rule in %s: %v", name(c), err)
					continue
				}
				r.RulesDeleted = append(r.RulesDeleted, name(c)+" jump "+target)
			}
		}
	}
	if err := conn.Flush(); err != nil {
		fail("deleting jumps: %v", err)
		return
	}
	for _, c := range doomed {
		conn.FlushChain(c)
	}
	if err := conn.Flush(); err != nil {
		fail("flushing chains: %v", err)
		return
	}
	for _, c := range doomed {
		conn.DelChain(c)
		if err := conn.Flush(); err != nil {
			fail("chain %s: %v", name(c), err)
			continue
		}
		r.ChainsDeleted = append(r.ChainsDeleted, name(c))
	}
	deleteEmptyTables(conn, emptyTables, r, fail)
}

// jumpTarget returns the chain a rule jumps or goes to, if it does.
func jumpTarget(rule *nftables.Rule) string {
	for _, e := range rule.Exprs {
		if v, ok := e.(*expr.Verdict); ok && (v.Kind == expr.VerdictJump || v.Kind == expr.VerdictGoto) {
			return v.Chain
		}
	}
	return ""
}

func deleteEmptyTables(conn *nftables.Conn, want []string, r *model.Reclaim, fail func(string, ...any)) {
	if len(want) == 0 {
		return
	}
	tables, err := conn.ListTables()
	if err != nil {
		fail("tables: %v", err)
		return
	}
	chains, _ := conn.ListChains()
	for _, t := range tables {
		id := host.FamilyName(t.Family) + " " + t.Name
		if !containsFold(want, id) {
			continue
		}
		empty := true
		for _, c := range chains {
			if c.Table.Name != t.Name || c.Table.Family != t.Family {
				continue
			}
			if rules, err := conn.GetRules(t, c); err != nil || len(rules) > 0 {
				empty = false
			}
		}
		if !empty {
			continue
		}
		conn.DelTable(t)
		if err := conn.Flush(); err != nil {
			fail("table %s: %v", id, err)
			continue
		}
		r.TablesDeleted = append(r.TablesDeleted, id)
	}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(strings.Join(strings.Fields(x), " "), s) {
			return true
		}
	}
	return false
}
