"""The classifier's knowledge: which programs read, which destroy, which run what they are given.

Data only, read by `shell_risk`. A program on no list is `review`. The lists are kept
short and plain so a reviewer can see at a glance what counts as read-only inspection;
growing them is how the classifier learns.
"""

from __future__ import annotations

import posixpath
import re

__all__ = [
    "DECODERS", "DOWNLOADERS", "INTERPRETERS", "KEYWORDS", "PUBLISHERS", "READ_ONLY", "SHELLS",
    "WIPERS", "WRAPPERS", "is_root_or_home", "is_system_path",
]

# Read-only inspection: these print what they read and change nothing (their writing
# options, where they have any, are looked at by `shell_risk`).
READ_ONLY = frozenset({
    "ls", "ll", "dir", "cat", "tac", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ack",
    "wc", "echo", "printf", "pwd", "whoami", "id", "groups", "date", "cal", "uname", "hostname", "which", "type",
    "whereis", "file", "stat", "du", "df", "tree", "diff", "cmp", "comm", "uniq", "cut", "tr", "nl", "fold",
    "jq", "yq", "basename", "dirname", "realpath", "readlink", "printenv", "true", "false", "test", "[", ":",
    "ps", "pgrep", "free", "uptime", "w", "who", "last", "lsof", "sha1sum", "sha256sum", "sha512sum", "md5sum",
    "cksum", "b2sum", "od", "xxd", "hexdump", "strings", "column", "seq", "sleep", "cd", "pushd", "popd",
    "history", "locale", "nproc", "lscpu", "lsblk", "lsusb", "lspci", "netstat", "ss", "dig",
    "nslookup", "host", "ping", "env", "man", "help", "tldr", "expr", "bc", "paste", "join", "expand", "rev",
    "look", "zcat", "zgrep", "bzcat", "xzcat", "getent", "arch", "tty", "sort", "sed", "find", "fd", "base64",
    "git", "exit", "wait", "jobs", "read", "shasum", "numfmt", "column", "mdfind", "nvidia-smi", "vmstat",
    "iostat", "top", "htop",
})
# Programs that run the text they are given (as an argument, or on standard input).
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox-sh", "csh", "tcsh"})
INTERPRETERS = SHELLS | frozenset({
    "python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "tclsh", "osascript",
    "eval", "source", ".", "pwsh", "powershell", "deno", "bun",
})
DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-download", "lynx", "links"})
DECODERS = {"base64": ("-d", "--decode", "-D"), "xxd": ("-r",), "openssl": ("-d",), "gunzip": ("",),
            "zcat": ("",), "rev": ("",), "uudecode": ("",), "base32": ("-d", "--decode")}
# Always high: they write raw disks or file systems, end the machine, or wipe files.
WIPERS = {
    "dd": "dd (raw copies to files and disks)", "mkfs": "mkfs (makes a file system)", "mke2fs": "mkfs",
    "mkswap": "mkswap", "fdisk": "fdisk (partitions a disk)", "sfdisk": "sfdisk", "parted": "parted",
    "wipefs": "wipefs", "shred": "shred (overwrites files)", "shutdown": "shutdown", "reboot": "reboot",
    "halt": "halt", "poweroff": "poweroff", "killall5": "killall5", "cryptsetup": "cryptsetup",
    "sudo": "sudo (privilege)", "su": "su (privilege)", "doas": "doas (privilege)", "pkexec": "pkexec (privilege)",
    "run0": "run0 (privilege)", "visudo": "visudo", "passwd": "passwd", "useradd": "useradd", "userdel": "userdel",
    "usermod": "usermod", "chpasswd": "chpasswd", "insmod": "insmod", "rmmod": "rmmod", "modprobe": "modprobe",
}
# (program, sub-command) pairs that publish to a public registry.
PUBLISHERS = frozenset({
    ("npm", "publish"), ("npm", "unpublish"), ("pnpm", "publish"), ("yarn", "publish"), ("bun", "publish"),
    ("twine", "upload"), ("poetry", "publish"), ("flit", "publish"), ("hatch", "publish"), ("uv", "publish"),
    ("cargo", "publish"), ("gem", "push"), ("docker", "push"), ("podman", "push"), ("gh", "release"),
    ("pdm", "publish"), ("dotnet", "nuget"), ("mvn", "deploy"), ("helm", "push"), ("vsce", "publish"),
})
# Words that come before the program they run: the program after them is what is rated.
# The value: how many of the following words are the wrapper's own (options are skipped too).
WRAPPERS = {"nice": 0, "nohup": 0, "time": 0, "timeout": 1, "stdbuf": 0, "ionice": 0, "command": 0,
            "builtin": 0, "exec": 0, "busybox": 0, "xargs": 0, "env": 0, "unbuffer": 0, "chronic": 0,
            "caffeinate": 0, "taskset": 1, "flock": 1, "setsid": 0, "torsocks": 0, "proxychains": 0,
            "strace": 0, "ltrace": 0, "watch": 0, "catchsegv": 0, "then": 0, "do": 0, "else": 0, "elif": 0, "if": 0,
            "while": 0, "until": 0, "!": 0, "{": 0, "}": 0, "(": 0, "fi": 0, "done": 0, "esac": 0}
# Wrapper options that take a value (so the value is not taken for the program).
WRAPPER_VALUED = {"-n", "-u", "-s", "-k", "-i", "-o", "-e", "-c", "-C", "-p", "-P", "-I", "-L", "-d", "-E",
                  "--signal", "--kill-after", "--unset", "--chdir", "--max-args", "--max-procs", "--delimiter",
                  "--replace", "--adjustment", "--class", "--classdata", "--input", "--output", "--error"}
# Simple commands that only name data (loop heads, function words): nothing runs.
KEYWORDS = frozenset({"for", "select", "case", "function", "in", "local", "declare", "typeset", "readonly",
                      "shift", "return", "break", "continue", "set", "unset", "trap", "umask", "ulimit"})

# Where a write is high: the system's own files, the boot, devices and the user's keys
# and shell start-up files (a line there runs in every later shell).
_SYSTEM_ROOTS = ("/etc", "/usr", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys", "/proc",
                 "/dev", "/root", "/var/spool/cron", "/var/lib", "/System", "/Library", "/private/etc",
                 "/opt/homebrew/bin")
_HOME_SECRETS = ("~/.ssh", "~/.gnupg", "~/.aws", "~/.kube", "~/.docker", "~/.netrc", "~/.bashrc", "~/.bash_profile",
                 "~/.profile", "~/.zshrc", "~/.zprofile", "~/.zshenv", "~/.bash_login", "~/.config/autostart",
                 "~/.config/systemd", "~/.npmrc", "~/.pypirc", "~/.gitconfig", "~/.git-credentials",
                 "~/Library/LaunchAgents", "~/.local/bin")
_GUARDED = frozenset((*_SYSTEM_ROOTS, *_HOME_SECRETS))
_GUARDED_FOLDERS = tuple(root + "/" for root in _GUARDED)
_HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"})
_HOME_FORMS = re.compile(r"^(?:~[^/]*|\$HOME|\$\{HOME\}|/home/[^/]+|/Users/[^/]+)(?=/|$)")


def _normal(path: str) -> str:
    """The path with `~`, `$HOME` and `/home/<user>` folded to `~`, and `..` taken out."""
    folded = _HOME_FORMS.sub("~", path.strip())
    if not folded:
        return ""
    normal = posixpath.normpath(folded)
    return "/" if normal.startswith("//") and normal.strip("/") == "" else normal


def is_system_path(path: str) -> bool:
    """A path a write to (or a mode change of) counts as high."""
    normal = _normal(path)
    if normal in _HARMLESS_DEVICES or normal.startswith("/dev/fd/"):
        return False
    return normal == "/" or normal in _GUARDED or normal.startswith(_GUARDED_FOLDERS)


def is_root_or_home(path: str) -> bool:
    """`/`, the home folder, or a glob of either: what a recursive delete must never name."""
    normal = _normal(path.rstrip("*") or path)
    return normal in ("/", "~", ".", "..", "*", "/*", "~/*") or path.strip() in ("/*", "~/*", "*", ".*", "/.*")
