package reclaim

import (
	"strings"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"

	"faultwin/internal/model"
	"faultwin/snapshots"
	"faultwin/snapshots/host"
)

// deleteLinks deletes the claimed links, ports before bridges, each only
// while its index still names it: a link gone and its name taken again by
// someone else's is not the run's.
func deleteLinks(links []snapshots.Link, r *model.Reclaim, fail func(string, ...any)) {
	for pass := 0; pass < 2; pass++ {
		for _, l := range links {
			if (pass == 0) == (l.Kind == "bridge") {
				continue
			}
			k, err := netlink.LinkByIndex(l.Index)
			if err != nil || k.Attrs().Name != l.Name {
				continue // went with its peer or its bridge
			}
			if err := netlink.LinkDel(k); err != nil {
				if _, gone := netlink.LinkByIndex(l.Index); gone != nil {
					continue
				}
				fail("link %s: %v", l.Name, err)
				continue
			}
			r.LinksDeleted = append(r.LinksDeleted, l.Name)
		}
	}
}

// deleteChains deletes the claimed chains, with every rule that jumps to
// them, then the claimed tables listed in emptyTables once no rule is left
// in them. A chain is matched by its table's and its own handle, so a
// chain of the same name made since by someone else is not touched.
func deleteChains(claimed map[string]string, emptyTables []string, r *model.Reclaim, fail func(string, ...any)) {
	if len(claimed) == 0 {
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
	current, err := currentIDs()
	if err != nil {
		fail("%v", err)
		return
	}
	name := func(c *nftables.Chain) string {
		return host.FamilyName(c.Table.Family) + " " + c.Table.Name + " " + c.Name
	}
	isDoomed := func(family, table, chain string) bool {
		key := "chain " + family + " " + table + " " + chain
		id, ok := claimed[key]
		return ok && current[key] == id
	}
	var doomed []*nftables.Chain
	for _, c := range chains {
		if isDoomed(host.FamilyName(c.Table.Family), c.Table.Name, c.Name) {
			doomed = append(doomed, c)
		}
	}
	for _, c := range chains {
		rules, err := conn.GetRules(c.Table, c)
		if err != nil {
			fail("rules of %s: %v", name(c), err)
			continue
		}
		fam := host.FamilyName(c.Table.Family)
		for _, rule := range rules {
			target := jumpTarget(rule)
			if target == "" || !isDoomed(fam, c.Table.Name, target) || isDoomed(fam, c.Table.Name, c.Name) {
				continue
			}
			if err := conn.DelRule(rule); err != nil {
				fail("rule in %s: %v", name(c), err)
				continue
			}
			r.RulesDeleted = append(r.RulesDeleted, name(c)+" jump "+target)
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
	deleteEmptyTables(conn, claimed, current, emptyTables, r, fail)
}

// currentIDs reads the identity of every table and chain now, by key.
func currentIDs() (map[string]string, error) {
	tables, chains, err := host.NFTHandles()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for id, h := range tables {
		t := snapshots.Table{Family: id.Family, Name: id.Name, Handle: h, ChainHandles: chains[id]}
		out[snapshots.TableKey(t)] = snapshots.TableID(t)
		for c := range chains[id] {
			out[snapshots.ChainKey(t, c)] = snapshots.ChainID(t, c)
		}
	}
	return out, nil
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

// deleteEmptyTables deletes the tables of want that the run made (claimed,
// with the same handle now) and that hold no rule any more.
func deleteEmptyTables(conn *nftables.Conn, claimed, current map[string]string, want []string, r *model.Reclaim, fail func(string, ...any)) {
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
		if h, ok := claimed["table "+id]; !ok || current["table "+id] != h {
			continue // the table was there before the run, or is someone else's since
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
