// A seccomp filter (classic BPF, as bubblewrap's --seccomp takes it) for processes that run a deployment's code:
// they may start threads but no process (a build: processes, but no namespace), and may not use the kernel
// interfaces a sandboxed program has no use for and escapes have come through (ptrace, kernel keyrings, BPF,
// userfaultfd, perf, namespaces, mounts, modules). A refused call fails with EPERM; clone3 answers ENOSYS so glibc
// falls back to clone, whose flags are checked.

const EPERM = 1;
const ENOSYS = 38;
const CLONE_THREAD = 0x10000;
/** CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: a new namespace of any kind. */
const CLONE_NEW_NAMESPACES = 0x7e020000;

// struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian: low half first).
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const RET_KILL_PROCESS = 0x80000000;

interface Arch {
  audit: number;
  clone: number;
  clone3: number;
  /** Calls refused outright (fork and vfork where the architecture has them, and the rest above). */
  refused: number[];
  /** The x32 ABI's calls are numbered from here (x86_64 only): refused all. */
  x32Base?: number;
}

const ARCHES: Record<string, Arch> = {
  x64: {
    audit: 0xc000003e,
    clone: 56,
    clone3: 435,
    x32Base: 0x40000000,
    refused: [
      57, // fork
      58, // vfork
      101, // ptrace
      310, // process_vm_readv
      311, // process_vm_writev
      250, // keyctl
      248, // add_key
      249, // request_key
      321, // bpf
      323, // userfaultfd
      298, // perf_event_open
      272, // unshare
      308, // setns
      165, // mount
      166, // umount2
      155, // pivot_root
      161, // chroot
      175, // init_module
      313, // finit_module
      176, // delete_module
      246, // kexec_load
      320, // kexec_file_load
      169, // reboot
      167, // swapon
      168, // swapoff
      163, // acct
      304, // open_by_handle_at
      428, // open_tree
      429, // move_mount
      430, // fsopen
      431, // fsconfig
      432, // fsmount
      433, // fspick
    ],
  },
  arm64: {
    audit: 0xc00000b7,
    clone: 220,
    clone3: 435,
    refused: [
      117, // ptrace
      270, // process_vm_readv
      271, // process_vm_writev
      219, // keyctl
      217, // add_key
      218, // request_key
      280, // bpf
      282, // userfaultfd
      241, // perf_event_open
      97, // unshare
      268, // setns
      40, // mount
      39, // umount2
      41, // pivot_root
      51, // chroot
      105, // init_module
      273, // finit_module
      106, // delete_module
      104, // kexec_load
      294, // kexec_file_load
      142, // reboot
      224, // swapon
      225, // swapoff
      89, // acct
      265, // open_by_handle_at
      428, // open_tree
      429, // move_mount
      430, // fsopen
      431, // fsconfig
      432, // fsmount
      433, // fspick
    ],
  },
};

type Insn = [code: number, jt: number, jf: number, k: number];

/** Whether this machine's architecture has a filter here (else the sandbox runs without one and says so). */
export function seccompSupported(arch = process.arch): boolean {
  return arch in ARCHES;
}

/**
 * The filter program for `arch` (Node's process.arch), as the bytes of a `struct sock_filter[]`. With
 * `processes` (a build: npm starts git and node) new processes are allowed, without new namespaces; the rest
 * stays refused.
 */
export function seccompProgram(arch = process.arch, opts: { processes?: boolean } = {}): Buffer {
  const base = ARCHES[arch];
  if (!base) throw new Error(`no seccomp filter for ${arch}`);
  const forks = new Set([57, 58]); // x86_64 fork, vfork
  const a: Arch = opts.processes
    ? { ...base, refused: base.refused.filter((nr) => !(arch === "x64" && forks.has(nr))) }
    : base;
  // Layout: [arch check] [x32 check] [load nr] [refused…] [clone3] [clone] [allow] [kill] [eperm] [enosys]
  // [clone flags: load arg0, jset, allow or eperm]. Jumps are forward, relative to the next instruction.
  const body: Insn[] = [];
  const refusedCount = a.refused.length;
  const head = 2 + (a.x32Base ? 1 : 0) + 1; // arch load + arch check + x32 check + nr load
  const afterRefused = head + refusedCount;
  const idxClone3 = afterRefused;
  const idxClone = afterRefused + 1;
  const idxAllow = afterRefused + 2;
  const idxKill = idxAllow + 1;
  const idxEperm = idxKill + 1;
  const idxEnosys = idxEperm + 1;
  const idxCloneFlags = idxEnosys + 1;
  const to = (from: number, target: number) => target - from - 1;

  body.push([LD_W_ABS, 0, 0, OFFSET_ARCH]);
  body.push([JEQ_K, 0, to(1, idxKill), a.audit]);
  body.push([LD_W_ABS, 0, 0, OFFSET_NR]);
  if (a.x32Base) body.push([JGE_K, to(3, idxEperm), 0, a.x32Base]);
  for (const nr of a.refused) body.push([JEQ_K, to(body.length, idxEperm), 0, nr]);
  body.push([JEQ_K, to(idxClone3, idxEnosys), 0, a.clone3]);
  body.push([JEQ_K, to(idxClone, idxCloneFlags), 0, a.clone]);
  body.push([RET_K, 0, 0, RET_ALLOW]);
  body.push([RET_K, 0, 0, RET_KILL_PROCESS]);
  body.push([RET_K, 0, 0, RET_ERRNO | EPERM]);
  body.push([RET_K, 0, 0, RET_ERRNO | ENOSYS]);
  body.push([LD_W_ABS, 0, 0, OFFSET_ARG0_LOW]);
  if (opts.processes) {
    // clone: a process or thread is allowed, a new namespace (a user namespace above all) refused.
    body.push([JSET_K, 0, 1, CLONE_NEW_NAMESPACES]);
    body.push([RET_K, 0, 0, RET_ERRNO | EPERM]);
    body.push([RET_K, 0, 0, RET_ALLOW]);
  } else {
    // clone: a thread (CLONE_THREAD set) is allowed, a new process refused.
    body.push([JSET_K, 0, 1, CLONE_THREAD]);
    body.push([RET_K, 0, 0, RET_ALLOW]);
    body.push([RET_K, 0, 0, RET_ERRNO | EPERM]);
  }
  const out = Buffer.alloc(body.length * 8);
  body.forEach(([code, jt, jf, k], i) => {
    if (jt < 0 || jf < 0 || jt > 255 || jf > 255) throw new Error("seccomp jump out of range");
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(jt, i * 8 + 2);
    out.writeUInt8(jf, i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
