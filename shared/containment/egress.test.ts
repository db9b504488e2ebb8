import { describe, expect, it } from "vitest";
import { EgressRefused, type EgressRules, egressTarget } from "./egress.ts";

// The one address policy: the egress proxy of sandboxed code and the platform's own requests on a caller's or a
// deployment's behalf (request.ts) both ask egressTarget where `host:port` may be reached.
const dns: Record<string, string[]> = {
  "api.example.com": ["93.184.215.14"],
  "v6.example.com": ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "loopback.example.com": ["127.0.0.1"],
  "mixed.example.com": ["93.184.215.14", "10.0.0.7"],
  "metadata.example.com": ["169.254.169.254"],
  "mirror.lan": ["10.1.2.3"],
};
const rules = (allow: string[] = []): EgressRules => ({
  allow,
  resolve: async (host) => dns[host] ?? [],
});
const refused = (host: string, port = 80, r = rules()) =>
  expect(egressTarget(host, port, r)).rejects.toThrow(EgressRefused);

describe("egressTarget: where sandboxed code and the platform's requests may go", () => {
  it("a public address, or a name resolving only to public addresses, is reached at the address checked", async () => {
    expect(await egressTarget("93.184.215.14", 443, rules())).toBe("93.184.215.14");
    expect(await egressTarget("api.example.com", 443, rules())).toBe("93.184.215.14");
    expect(await egressTarget("[2606:2800:21f:cb07:6820:80da:af6b:8b2c]", 443, rules())).toBe(
      "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    );
    expect(await egressTarget("v6.example.com", 443, rules())).toBe("2606:2800:21f:cb07:6820:80da:af6b:8b2c");
  });

  it("refuses loopback, in any spelling", async () => {
    for (const host of ["127.0.0.1", "127.1.2.3", "[::1]", "::1", "0.0.0.0", "[::]"]) await refused(host);
  });

  it("refuses link-local and the metadata address", async () => {
    for (const host of ["169.254.169.254", "169.254.0.1", "[fe80::1]", "[fd00:ec2::254]"])
      await refused(host);
  });

  it("refuses private, CGNAT, multicast and reserved addresses", async () => {
    for (const host of [
      "10.0.0.1",
      "172.16.5.4",
      "192.168.1.1",
      "100.64.0.1",
      "224.0.0.1",
      "255.255.255.255",
    ])
      await refused(host);
    for (const host of ["[fc00::1]", "[ff02::1]", "198.18.0.1"]) await refused(host);
  });

  it("refuses IPv4 addresses embedded in IPv6: mapped, compatible, NAT64 and 6to4", async () => {
    for (const host of ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:169.254.169.254]", "[::10.0.0.1]"])
      await refused(host);
    for (const host of ["[64:ff9b::a9fe:a9fe]", "[2002:7f00:1::]"]) await refused(host);
  });

  it("checks names after DNS: a name resolving to loopback or metadata, or to any internal address, is refused", async () => {
    await refused("loopback.example.com");
    await refused("metadata.example.com");
    await refused("mixed.example.com");
    await refused("localhost", 80, { allow: [] });
  });

  it("a name that does not resolve is refused as unresolved", async () => {
    const err = await egressTarget("nowhere.example.com", 80, rules()).catch((e) => e);
    expect(err).toBeInstanceOf(EgressRefused);
    expect(err.unresolved).toBe(true);
    const internal = await egressTarget("127.0.0.1", 80, rules()).catch((e) => e);
    expect(internal.unresolved).toBe(false);
  });

  it("EGRESS_ALLOW lets one host:port through, whatever it resolves to, and no other port of it", async () => {
    const allow = ["mirror.lan:4873", "127.0.0.1:8999"];
    expect(await egressTarget("mirror.lan", 4873, rules(allow))).toBe("10.1.2.3");
    expect(await egressTarget("127.0.0.1", 8999, rules(allow))).toBe("127.0.0.1");
    await refused("mirror.lan", 80, rules(allow));
    await refused("127.0.0.1", 9000, rules(allow));
    // By name as listed: another name for the same address is not the listed host.
    await refused("localhost", 8999, rules(allow));
  });

  it("names compare case-insensitively and without a trailing dot", async () => {
    expect(await egressTarget("MIRROR.lan.", 4873, rules(["mirror.lan:4873"]))).toBe("10.1.2.3");
    await refused("Loopback.Example.com.");
  });

  it("refuses a target without a host or with a port out of range", async () => {
    await refused("", 80);
    await refused("api.example.com", 0);
    await refused("api.example.com", 70000);
  });
});
