#!/usr/bin/python3
"""A file system that loses what was not synced when the power is cut (LazyFS's model), for driverd's tests.

    powercut-fs.py BACKING MOUNTPOINT --control SOCKET [--seed N]

Everything written through MOUNTPOINT lives in this process's memory (its "page cache") and is served from
there. Only a sync makes it durable, in BACKING:
- fsync/fdatasync of a file makes its data and size durable;
- fsync of a directory makes its names durable (creates, renames, unlinks, mkdirs inside it).
Nothing else ever reaches BACKING: a rename without a directory fsync vanishes at a cut, a commit that was never
synced is lost, a file whose name was synced but whose data was not comes back empty.

The control socket takes one command per connection and answers one line:
- `cut` drops everything unsynced and exits (the mount is then dead: unmount it lazily, mount again);
- `cut tear` does the same after writing a prefix of the last unsynced write to the disk, up to a random
  512-byte sector boundary (a write torn by the power going), when that write's file has a durable copy;
- `stats` answers counters as JSON;
- `arm NAME` makes the next fsync of a directory named NAME the last thing the disk sees: the sync is done, then the
  power goes (as `cut`) before the caller hears back. A test places a cut exactly between two steps that way.

BACKING holds `meta.json` (durable names and inodes) and `data/<inode>` (durable content); mounting again over it
serves exactly what was durable. It is a model for tests, not a file system to keep data in: one lock, all in
memory, no hard links or symlinks. Debian: fuse3 and python3-fusepy (the module is named `fusepy`); root.
"""
import argparse
import errno
import json
import os
import random
import socket
import stat
import sys
import threading
import time

from fusepy import FUSE, FuseOSError, Operations

SECTOR = 512
ROOT = 1


class Inode:
    def __init__(self, ino, kind, mode):
        self.ino = ino
        self.kind = kind          # "f" or "d"
        self.mode = mode
        self.entries = {}         # a directory's names (volatile), name -> ino
        self.data = None          # a file's content (volatile), loaded on first use
        self.dirty = []           # unsynced writes (offset, length)
        self.size_dirty = False   # a truncate not synced yet
        self.mtime = time.time_ns()


class PowerCutFS(Operations):
    use_ns = True

    def __init__(self, backing, seed):
        self.backing = backing
        self.rng = random.Random(seed)
        self.mutex = threading.RLock()
        os.makedirs(os.path.join(backing, "data"), exist_ok=True)
        meta_path = os.path.join(backing, "meta.json")
        meta = json.load(open(meta_path)) if os.path.exists(meta_path) else None
        if meta is None:
            meta = {"next": 2, "inodes": {str(ROOT): ["d", 0o40755]}, "dirs": {str(ROOT): {}}}
        self.durable = meta
        self.inodes = {}
        self.next_ino = meta["next"]
        # Served state starts as the durable state; what no durable name reaches is gone (fsck at boot).
        reachable = set()
        stack = [ROOT]
        while stack:
            ino = stack.pop()
            reachable.add(ino)
            kind, mode = meta["inodes"][str(ino)]
            node = Inode(ino, kind, mode)
            self.inodes[ino] = node
            if kind == "d":
                node.entries = {name: child for name, child in meta["dirs"].get(str(ino), {}).items()}
                stack.extend(node.entries.values())
        for key in list(meta["inodes"]):
            if int(key) not in reachable:
                del meta["inodes"][key]
                meta["dirs"].pop(key, None)
                try:
                    os.unlink(self.data_path(int(key)))
                except FileNotFoundError:
                    pass
        self.last_write = None    # (ino, offset, bytes) of the newest unsynced write
        self.armed = None         # a directory name whose next fsync ends in a cut (`arm`)
        self.stats = {"fsync": 0, "fsyncdir": 0, "writes": 0, "bytes_written": 0, "bytes_synced": 0}

    # MARK: the model

    def data_path(self, ino):
        return os.path.join(self.backing, "data", str(ino))

    def save_meta(self):
        self.durable["next"] = self.next_ino
        path = os.path.join(self.backing, "meta.json")
        with open(path + ".new", "w") as out:
            json.dump(self.durable, out)
        os.replace(path + ".new", path)

    def resolve(self, path):
        node = self.inodes[ROOT]
        for part in [p for p in path.split("/") if p]:
            if node.kind != "d" or part not in node.entries:
                raise FuseOSError(errno.ENOENT)
            node = self.inodes[node.entries[part]]
        return node

    def parent_of(self, path):
        head, name = os.path.split(path.rstrip("/"))
        parent = self.resolve(head or "/")
        if parent.kind != "d":
            raise FuseOSError(errno.ENOTDIR)
        return parent, name

    def content(self, node):
        if node.data is None:
            try:
                with open(self.data_path(node.ino), "rb") as f:
                    node.data = bytearray(f.read())
            except FileNotFoundError:
                node.data = bytearray()
        return node.data

    def node_for(self, path, fh):
        if fh and fh in self.inodes:
            return self.inodes[fh]
        return self.resolve(path)

    def new_inode(self, kind, mode):
        node = Inode(self.next_ino, kind, mode)
        self.next_ino += 1
        self.inodes[node.ino] = node
        if kind == "f":
            node.data = bytearray()
        return node

    def sync_file(self, node):
        if node.kind != "f":
            return
        data = self.content(node)
        path = self.data_path(node.ino)
        mode = "r+b" if os.path.exists(path) else "w+b"
        with open(path, mode) as f:
            for offset, length in node.dirty:
                end = min(offset + length, len(data))
                if end > offset:
                    f.seek(offset)
                    f.write(data[offset:end])
                    self.stats["bytes_synced"] += end - offset
            f.truncate(len(data))
        node.dirty = []
        node.size_dirty = False
        if self.last_write and self.last_write[0] == node.ino:
            self.last_write = None
        key = str(node.ino)
        if key not in self.durable["inodes"]:
            self.durable["inodes"][key] = ["f", node.mode]
            self.save_meta()

    def sync_dir(self, node):
        """The directory's names as they are now become durable (and the inodes they name exist durably)."""
        self.durable["dirs"][str(node.ino)] = dict(node.entries)
        for child_ino in node.entries.values():
            child = self.inodes[child_ino]
            key = str(child_ino)
            if key not in self.durable["inodes"]:
                self.durable["inodes"][key] = [child.kind, child.mode]
                if child.kind == "d":
                    self.durable["dirs"].setdefault(key, {})
                elif not os.path.exists(self.data_path(child_ino)):
                    # A durable name whose data was never synced: an empty file after a cut.
                    open(self.data_path(child_ino), "wb").close()
        self.save_meta()

    def cut(self, tear):
        """The power goes: what is durable stays, a prefix of the last unsynced write may reach the disk."""
        torn = None
        if tear and self.last_write:
            ino, offset, data = self.last_write
            path = self.data_path(ino)
            first, last = offset // SECTOR, (offset + len(data) - 1) // SECTOR
            sectors = self.rng.randint(0, last - first + 1)
            end = max(offset, min(offset + len(data), (first + sectors) * SECTOR))
            if not os.path.exists(path):
                end = offset  # the file never reached the disk: nothing of it can
            if end > offset:
                with open(path, "r+b") as f:
                    f.seek(offset)
                    f.write(data[: end - offset])
            torn = {"inode": ino, "offset": offset, "length": len(data), "kept": end - offset}
        with open(os.path.join(self.backing, "cuts.log"), "a") as log:
            log.write(json.dumps({"torn": torn, **self.stats}) + "\n")
        return torn

    # MARK: FUSE operations

    def getattr(self, path, fh=None):
        with self.mutex:
            node = self.node_for(path, fh)
            now = node.mtime
            size = len(self.content(node)) if node.kind == "f" else 4096
            return {
                "st_mode": node.mode, "st_ino": node.ino, "st_nlink": 2 if node.kind == "d" else 1,
                "st_size": size, "st_blocks": (size + 511) // 512, "st_uid": 0, "st_gid": 0,
                "st_atime": now, "st_mtime": now, "st_ctime": now,
            }

    def readdir(self, path, fh):
        with self.mutex:
            node = self.resolve(path)
            return [".", ".."] + sorted(node.entries)

    def opendir(self, path):
        with self.mutex:
            return self.resolve(path).ino

    def mkdir(self, path, mode):
        with self.mutex:
            parent, name = self.parent_of(path)
            if name in parent.entries:
                raise FuseOSError(errno.EEXIST)
            node = self.new_inode("d", stat.S_IFDIR | (mode & 0o7777))
            parent.entries[name] = node.ino
            parent.mtime = time.time_ns()

    def rmdir(self, path):
        with self.mutex:
            parent, name = self.parent_of(path)
            node = self.resolve(path)
            if node.kind != "d":
                raise FuseOSError(errno.ENOTDIR)
            if node.entries:
                raise FuseOSError(errno.ENOTEMPTY)
            del parent.entries[name]

    def create(self, path, mode, fi=None):
        with self.mutex:
            parent, name = self.parent_of(path)
            if name in parent.entries:
                node = self.inodes[parent.entries[name]]
            else:
                node = self.new_inode("f", stat.S_IFREG | (mode & 0o7777))
                parent.entries[name] = node.ino
                parent.mtime = time.time_ns()
            return node.ino

    def open(self, path, flags):
        with self.mutex:
            node = self.resolve(path)
            if flags & os.O_TRUNC and node.kind == "f":
                self.truncate_node(node, 0)
            return node.ino

    def read(self, path, size, offset, fh):
        with self.mutex:
            data = self.content(self.node_for(path, fh))
            return bytes(data[offset:offset + size])

    def write(self, path, data, offset, fh):
        with self.mutex:
            node = self.node_for(path, fh)
            content = self.content(node)
            if offset > len(content):
                content.extend(bytes(offset - len(content)))
            content[offset:offset + len(data)] = data
            node.dirty.append((offset, len(data)))
            node.mtime = time.time_ns()
            self.last_write = (node.ino, offset, bytes(data))
            self.stats["writes"] += 1
            self.stats["bytes_written"] += len(data)
            return len(data)

    def truncate_node(self, node, length):
        content = self.content(node)
        if length < len(content):
            del content[length:]
        else:
            content.extend(bytes(length - len(content)))
        node.size_dirty = True
        node.mtime = time.time_ns()

    def truncate(self, path, length, fh=None):
        with self.mutex:
            self.truncate_node(self.node_for(path, fh), length)

    def fsync(self, path, datasync, fh):
        with self.mutex:
            self.stats["fsync"] += 1
            self.sync_file(self.node_for(path, fh))
            return 0

    def fsyncdir(self, path, datasync, fh):
        with self.mutex:
            self.stats["fsyncdir"] += 1
            self.sync_dir(self.node_for(path, fh))
            if self.armed is not None and os.path.basename(path) == self.armed:
                self.cut(tear=False)
                os._exit(0)
            return 0

    def unlink(self, path):
        with self.mutex:
            parent, name = self.parent_of(path)
            if name not in parent.entries:
                raise FuseOSError(errno.ENOENT)
            del parent.entries[name]
            parent.mtime = time.time_ns()

    def rename(self, old, new):
        with self.mutex:
            old_parent, old_name = self.parent_of(old)
            new_parent, new_name = self.parent_of(new)
            if old_name not in old_parent.entries:
                raise FuseOSError(errno.ENOENT)
            ino = old_parent.entries.pop(old_name)
            new_parent.entries[new_name] = ino
            old_parent.mtime = new_parent.mtime = time.time_ns()

    def chmod(self, path, mode):
        with self.mutex:
            node = self.resolve(path)
            node.mode = (node.mode & ~0o7777) | (mode & 0o7777)

    def chown(self, path, uid, gid):
        return 0

    def utimens(self, path, times=None):
        with self.mutex:
            self.resolve(path).mtime = time.time_ns()
            return 0

    def statfs(self, path):
        info = os.statvfs(self.backing)
        return {key: getattr(info, key) for key in (
            "f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}

    def link(self, target, source):
        raise FuseOSError(errno.EPERM)

    def symlink(self, target, source):
        raise FuseOSError(errno.EPERM)


def serve_control(fs, path):
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    while True:
        connection, _ = server.accept()
        with connection:
            command = connection.recv(256).decode().split()
            if command[:1] == ["cut"]:
                # Under the lock, no operation is half done; the process ends holding it, so nothing more is served.
                fs.mutex.acquire()
                torn = fs.cut(tear=command[1:] == ["tear"])
                connection.sendall((json.dumps({"torn": torn}) + "\n").encode())
                connection.close()
                os._exit(0)
            elif command[:1] == ["arm"] and len(command) == 2:
                with fs.mutex:
                    fs.armed = command[1]
                connection.sendall(b'{"armed": true}\n')
            elif command[:1] == ["stats"]:
                with fs.mutex:
                    connection.sendall((json.dumps(fs.stats) + "\n").encode())
            else:
                connection.sendall(b'{"error": "unknown command"}\n')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("backing")
    parser.add_argument("mountpoint")
    parser.add_argument("--control", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    fs = PowerCutFS(os.path.abspath(args.backing), args.seed)
    threading.Thread(target=serve_control, args=(fs, args.control), daemon=True).start()
    # hard_remove: unlink really unlinks (no .fuse_hidden renames); use_ino: our inode numbers; one thread: the model is
    # sequential anyway (every operation holds the lock).
    FUSE(fs, args.mountpoint, foreground=True, nothreads=True, allow_other=True, use_ino=True, hard_remove=True,
         fsname="powercut", default_permissions=True)


if __name__ == "__main__":
    sys.exit(main())
