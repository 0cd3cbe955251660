"""One pylxd script run against the simulator and against the real daemon
(test/lxc-client/pylxd-differential.test.ts compares the two outputs).

Usage: python3 pylxd-scenario.py SOCKET PREFIX IMAGE_ALIAS
Prints one JSON object per step: {"step", "outcome"}, where the outcome is what a user of pylxd
sees: an exception's class (and the daemon's message), or the state that resulted.
"""
import hashlib
import io
import json
import sys
import tarfile
from urllib.parse import quote

import pylxd
from pylxd import exceptions

socket_path, prefix, alias = sys.argv[1], sys.argv[2], sys.argv[3]
# pylxd takes a socket path only when os.path.isfile() holds, never for a socket: give the URL form.
client = pylxd.Client(endpoint="http+unix://" + quote(socket_path, safe=""))
source = {"type": "image", "alias": alias}


def unified_image():
    """A unified image tarball: metadata.yaml (with properties: LXD 5.0.2 panics on an X-LXD-properties
    header when metadata.yaml has none) and an empty rootfs."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        meta = b"architecture: x86_64\ncreation_date: 1700000000\nproperties:\n  os: busybox\n  description: rt upload\n"
        info = tarfile.TarInfo("metadata.yaml")
        info.size, info.mtime = len(meta), 1700000000
        tar.addfile(info, io.BytesIO(meta))
        rootfs = tarfile.TarInfo("rootfs")
        rootfs.type, rootfs.mode, rootfs.mtime = tarfile.DIRTYPE, 0o755, 1700000000
        tar.addfile(rootfs)
    return buf.getvalue()


def record(step, fn):
    try:
        result = fn()
        outcome = {"ok": result}
    except Exception as err:  # the class is the point: pylxd raises per channel
        outcome = {"raised": type(err).__name__, "message": str(err)}
    print(json.dumps({"step": step, "outcome": outcome}), flush=True)


def cleanup():
    for name in (prefix + "a", prefix + "b", prefix + "c"):
        try:
            inst = client.containers.get(name)
        except exceptions.NotFound:
            continue
        if inst.status != "Stopped":
            inst.stop(force=True, wait=True)
        inst.delete(wait=True)
    try:
        client.profiles.get(prefix + "p").delete()
    except exceptions.NotFound:
        pass


cleanup()
try:
    record("api_extensions has network and storage", lambda: [e in client.host_info["api_extensions"] for e in ("network", "storage")])
    record(
        "create with limits.memory=notanumber",
        lambda: client.containers.create({"name": prefix + "a", "source": source, "config": {"limits.memory": "notanumber"}}, wait=True).name,
    )
    record(
        "create with an unknown device type",
        lambda: client.containers.create({"name": prefix + "a", "source": source, "devices": {"x": {"type": "bogus"}}}, wait=True).name,
    )
    record("create with an invalid name", lambda: client.containers.create({"name": "bad_name!", "source": source}, wait=True).name)
    record("create", lambda: client.containers.create({"name": prefix + "a", "source": source}, wait=True).status)
    record("create under a taken name", lambda: client.containers.create({"name": prefix + "a", "source": source}, wait=True).name)
    record("exists after create", lambda: client.containers.exists(prefix + "a"))
    record("get a missing instance", lambda: client.containers.get(prefix + "zz").name)

    def start():
        inst = client.containers.get(prefix + "a")
        inst.start(wait=True)
        inst.sync()
        return inst.status

    record("start", start)
    record("rename while running", lambda: client.containers.get(prefix + "a").rename(prefix + "b", wait=True))
    record("restore a missing snapshot", lambda: client.containers.get(prefix + "a").restore_snapshot("nosuch", wait=True))

    def snapshot():
        inst = client.containers.get(prefix + "a")
        inst.snapshots.create("s1", wait=True)
        return [s.name for s in inst.snapshots.all()]

    record("snapshot", snapshot)
    record("snapshot under a taken name", lambda: client.containers.get(prefix + "a").snapshots.create("s1", wait=True).name)

    def stop():
        inst = client.containers.get(prefix + "a")
        inst.stop(wait=True, force=True)
        inst.sync()
        return inst.status

    record("stop", stop)

    def publish():
        image = client.containers.get(prefix + "a").publish(wait=True)
        exported = image.export().read()
        fingerprint = image.fingerprint
        image.delete(wait=True)
        return [len(fingerprint), len(exported) > 0, client.images.exists(fingerprint)]

    record("publish, export and delete an image", publish)
    def upload():
        # pylxd sends the bytes with no Content-Type: the daemon takes them as an upload (issue #41 item 3).
        data = unified_image()
        image = client.images.create(data, wait=True)
        try:
            seen = client.images.get(image.fingerprint)
            return [
                image.fingerprint == hashlib.sha256(data).hexdigest(),
                sorted(seen.properties.items()),
                seen.architecture,
                seen.filename,
                seen.size == len(data),
                seen.public,
            ]
        finally:
            image.delete(wait=True)

    record("upload an image without a Content-Type", upload)
    record("upload bytes that are no image", lambda: client.images.create(b"not an image", wait=True).fingerprint)
    record("profile create", lambda: client.profiles.create(prefix + "p", config={"user.x": "1"}).name)
    record("profile create under a taken name", lambda: client.profiles.create(prefix + "p").name)

    def update_invalid():
        inst = client.containers.get(prefix + "a")
        inst.config["security.privileged"] = "maybe"
        inst.save(wait=True)

    record("save invalid config", update_invalid)

    def rename():
        inst = client.containers.get(prefix + "a")
        inst.rename(prefix + "c", wait=True)
        return client.containers.exists(prefix + "c")

    record("rename while stopped", rename)
    record("delete", lambda: client.containers.get(prefix + "c").delete(wait=True))
finally:
    cleanup()
