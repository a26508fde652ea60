package host

import (
	"encoding/binary"
	"fmt"

	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// nftaTableHandle is NFTA_TABLE_HANDLE (linux/netfilter/nf_tables.h),
// which x/sys does not define.
const nftaTableHandle = 4

// TableRef names a table by family and name.
type TableRef = tableID

// NFTHandles is nftHandles for the last resort, which deletes a chain only
// while its handles are the ones claimed.
func NFTHandles() (map[TableRef]uint64, map[TableRef]map[string]uint64, error) { return nftHandles() }

// nftHandles reads the handles of every table and chain of the harness's
// network namespace, which google/nftables does not report: a table's
// handle, with its chains', names an object the kernel does not give to
// another while the table lives, where a name is anyone's.
// Equivalent to: nft -a list tables; nft -a list chains.
func nftHandles() (tables map[tableID]uint64, chains map[tableID]map[string]uint64, err error) {
	conn, err := netlink.Dial(unix.NETLINK_NETFILTER, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("nft handles: %w", err)
	}
	defer conn.Close()
	tables, chains = map[tableID]uint64{}, map[tableID]map[string]uint64{}
	msgs, err := nftDump(conn, unix.NFT_MSG_GETTABLE)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range msgs {
		name, _, handle := nftAttrs(m, unix.NFTA_TABLE_NAME, 0, nftaTableHandle)
		tables[tableID{familyOf(m), name}] = handle
	}
	if msgs, err = nftDump(conn, unix.NFT_MSG_GETCHAIN); err != nil {
		return nil, nil, err
	}
	for _, m := range msgs {
		table, name, handle := nftAttrs(m, unix.NFTA_CHAIN_TABLE, unix.NFTA_CHAIN_NAME, unix.NFTA_CHAIN_HANDLE)
		id := tableID{familyOf(m), table}
		if chains[id] == nil {
			chains[id] = map[string]uint64{}
		}
		chains[id][name] = handle
	}
	return tables, chains, nil
}

// nftDump dumps one kind of nftables object of every family.
func nftDump(conn *netlink.Conn, msgType int) ([]netlink.Message, error) {
	req := netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | msgType),
			Flags: netlink.Request | netlink.Dump,
		},
		Data: []byte{unix.AF_UNSPEC, unix.NFNETLINK_V0, 0, 0},
	}
	msgs, err := conn.Execute(req)
	if err != nil {
		return nil, fmt.Errorf("nft handles: dump %d: %w", msgType, err)
	}
	return msgs, nil
}

func familyOf(m netlink.Message) string {
	if len(m.Data) == 0 {
		return ""
	}
	return FamilyName(nftables.TableFamily(m.Data[0]))
}

// nftAttrs reads two string attributes and one big-endian u64 (a handle)
// of an nftables message; an attribute type of 0 is not read.
func nftAttrs(m netlink.Message, s1, s2, u uint16) (string, string, uint64) {
	var a, b string
	var h uint64
	if len(m.Data) < 4 {
		return "", "", 0
	}
	ad, err := netlink.NewAttributeDecoder(m.Data[4:])
	if err != nil {
		return "", "", 0
	}
	ad.ByteOrder = binary.BigEndian
	for ad.Next() {
		switch t := ad.Type(); {
		case t == s1:
			a = ad.String()
		case s2 != 0 && t == s2:
			b = ad.String()
		case t == u:
			h = ad.Uint64()
		}
	}
	return a, b, h
}
