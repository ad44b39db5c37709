"""Counting on a Dask cluster: a LocalCluster of two worker processes, started once."""

import json
import os
import subprocess
import sys

import dask
import distributed
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import bytepair
from bytepair import Files
from bytepair.counts import cluster as cluster_module
from bytepair.cli.main import main
from helpers import write_shards


@pytest.fixture(scope="module")
def client():
    # No dashboard; the scheduler's HTTP server (health routes) still starts, on a free port
    # rather than 8787, which another cluster on the machine may hold.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40,
                                  scheduler_kwargs={"dashboard_address": ":0"}) as cluster:
        with distributed.Client(cluster, set_as_default=False) as client:
            yield client


@pytest.fixture
def lines(real_text):
    return real_text.decode().splitlines()[:2400]


@pytest.fixture
def shards(tmp_path, lines):
    return write_shards(tmp_path, lines, 3)


@pytest.fixture
def small_parts(monkeypatch):
    """Parts of about 8 KB, so that a small corpus makes many tasks."""
    monkeypatch.setattr(cluster_module, "PART_BYTES", 8192)


def _tasks(stream, prefix):
    return [t for t in stream.data if t["key"].startswith(prefix)]


@pytest.mark.parametrize("pretokenize", ["gpt2", "whitespace", None])
def test_cluster_count_equals_local_and_runs_on_the_workers(client, shards, small_parts, pretokenize):
    files = Files(*shards, per_line=True)
    parts = cluster_module.cluster_parts(client, files)
    assert len(parts) >= 8
    with distributed.get_task_stream(client) as stream:
        table = bytepair.count(files, pretokenize=pretokenize, client=client, progress=False)
    assert table == bytepair.count(files, pretokenize=pretokenize, workers=1, progress=False)
    counted = _tasks(stream, "bytepair-count-")
    summed = _tasks(stream, "bytepair-sum-")
    # One task per part, and the partial tables were added on the cluster.
    assert len(counted) == len(parts)
    assert len(summed) == len(parts) - 1
    # Every task ran on a worker, and the workers are other processes than this one.
    assert all(t["worker"].startswith("tcp://") for t in counted + summed)
    assert os.getpid() not in client.run(os.getpid).values()


def test_cluster_counts_parquet_row_groups(client, tmp_path, lines):
    parquet = tmp_path / "lines.parquet"
    pq.write_table(pa.table({"body": lines}), parquet, row_group_size=300)
    with distributed.get_task_stream(client) as stream:
        table = bytepair.count(parquet, text_column="body", client=client, progress=False)
    assert table == bytepair.count(parquet, text_column="body", workers=1, progress=False)
    assert len(_tasks(stream, "bytepair-count-")) == 8  # 2400 rows in groups of 300


def test_cluster_reads_file_urls(client, shards, small_parts):
    urls = [shard.as_uri() for shard in shards]
    with distributed.get_task_stream(client) as stream:
        table = bytepair.count(Files(*urls, per_line=True), client=client, progress=False)
    assert table == bytepair.count(Files(*shards, per_line=True), workers=1, progress=False)
    assert len(_tasks(stream, "bytepair-count-")) >= 8


def test_cluster_training_equals_local_training(client, shards):
    local = bytepair.train(Files(*shards, per_line=True), merges=120, progress=False)
    assert bytepair.train(Files(*shards, per_line=True), merges=120, client=client,
                          progress=False) == local


def test_worker_errors_reach_the_caller(client, tmp_path, small_parts):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps({"text": f"line {i}"}) + "\n" for i in range(2000))
                   + "{not json\n")
    with pytest.raises(ValueError, match=r"bad\.jsonl:2001: not a JSON line"):
        bytepair.count(bad, client=client, progress=False)


def test_cluster_needs_files(client):
    with pytest.raises(TypeError, match="files"):
        bytepair.count(["a document"], client=client)


def test_cli_scheduler_gives_the_local_model(client, shards, tmp_path, capsys):
    address = client.scheduler.address
    assert main(["count", *map(str, shards), "--per-line", "--scheduler", address,
                 "-o", str(tmp_path / "c.counts")]) == 0
    assert main(["train", "--counts", str(tmp_path / "c.counts"), "--vocab-size", "400",
                 "-q", "-o", str(tmp_path / "cluster.json")]) == 0
    assert main(["train", *map(str, shards), "--per-line", "--vocab-size", "400", "-q",
                 "-o", str(tmp_path / "local.json")]) == 0
    assert bytepair.load(tmp_path / "cluster.json") == bytepair.load(tmp_path / "local.json")
    capsys.readouterr()


def test_cli_unreachable_scheduler_is_one_line(tmp_path, shards, capsys, monkeypatch):
    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT", 1)
    out = tmp_path / "c.counts"
    code = main(["count", str(shards[0]), "--scheduler", "tcp://127.0.0.1:9", "-o", str(out)])
    stdout, stderr = capsys.readouterr()
    assert code == 2
    assert stderr.startswith("bytepair: error: scheduler: cannot connect to 'tcp://127.0.0.1:9'")
    assert stderr.count("\n") == 1
    assert not out.exists()


def test_cluster_progress_adds_up_to_the_corpus_size(client, shards, small_parts, tmp_path, lines):
    parquet = tmp_path / "lines.parquet"
    pq.write_table(pa.table({"text": lines}), parquet, row_group_size=400)
    files = Files(*shards, parquet, per_line=True)

    class Bar:
        seen = 0

        def update(self, size):
            self.seen += size

    bar = Bar()
    table = cluster_module.count_on_cluster(client, files, None, progress_bar=bar)
    assert table == bytepair.count(files, pretokenize=None, progress=False)
    # Row groups count as even shares of their file (rounded down).
    assert files.total_bytes() - 6 <= bar.seen <= files.total_bytes()


def _die(*args, **kwargs):
    os._exit(1)


def _fail(*args, **kwargs):
    raise RuntimeError("boom")


@pytest.fixture
def doomed_cluster():
    """A one-worker cluster that gives up on a task at the first worker it kills; ``set(f)``
    makes ``f`` the counting function on the workers, ``address`` is the scheduler's."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=50,
                                      scheduler_kwargs={"dashboard_address": ":0"}) as cluster:
            with distributed.Client(cluster, set_as_default=False) as client:
                def set_counter(function):
                    def patch():
                        from bytepair.counts import cluster as module
                        module.count_part = function
                    client.run(patch)
                client.set_counter = set_counter
                yield client


@pytest.mark.slow  # a cluster of its own per case; test_worker_errors_reach_the_caller is quick
@pytest.mark.parametrize(("counter", "message"), [
    (_die, r"c\.txt \(part from 0 to the end\): the task ended every worker that ran it "
           r"\(killed, or out of memory\?\)"),
    (_fail, "counting failed on a worker: RuntimeError: boom"),
])
def test_dying_workers_and_failed_tasks_are_one_error_line(doomed_cluster, tmp_path, capsys,
                                                           counter, message):
    corpus = tmp_path / "c.txt"
    corpus.write_text("some text\n" * 100)
    doomed_cluster.set_counter(counter)
    with pytest.raises(OSError, match=message):
        bytepair.count(corpus, client=doomed_cluster, progress=False)
    if counter is _die:
        doomed_cluster.wait_for_workers(1, timeout=60)  # the nanny starts a fresh worker
        doomed_cluster.set_counter(counter)
    code = main(["count", str(corpus), "--scheduler", doomed_cluster.scheduler.address,
                 "-o", str(tmp_path / "c.counts")])
    stderr = capsys.readouterr().err
    assert code == 2
    assert stderr.startswith("bytepair: error: cluster: ") and stderr.count("\n") == 1, stderr
    assert not (tmp_path / "c.counts").exists()


#: A cluster in one process (scheduler and a worker thread pool) whose counting tasks say
#: that they started, then wait; it prints its address first.
_STALLED_CLUSTER = """
import time
import distributed
from bytepair.counts import cluster as module
def stall(*args, **kwargs):
    print("COUNTING", flush=True)
    time.sleep(600)
module.count_part = stall
cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                   dashboard_address=None, silence_logs=50,
                                   scheduler_kwargs={"dashboard_address": ":0"})
print(cluster.scheduler_address, flush=True)
time.sleep(600)
"""


@pytest.mark.slow
def test_a_scheduler_lost_while_counting_is_one_error_line(tmp_path):
    """It was a traceback of 57 lines and exit code 1."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("some text\n" * 100)
    out = tmp_path / "c.counts"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    cluster = subprocess.Popen([sys.executable, "-c", _STALLED_CLUSTER], stdout=subprocess.PIPE,
                               text=True, env=env)
    try:
        address = cluster.stdout.readline().strip()
        assert address.startswith("tcp://")
        count = subprocess.Popen([sys.executable, "-m", "bytepair", "count", str(corpus),
                                  "--scheduler", address, "-o", str(out)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert cluster.stdout.readline().strip() == "COUNTING"
        cluster.kill()
        stdout, stderr = count.communicate(timeout=120)
    finally:
        cluster.kill()
        cluster.wait()
        cluster.stdout.close()
    assert count.returncode == 2, stderr
    assert stderr.startswith(f"bytepair: error: scheduler: lost the scheduler at {address!r} while "
                             "counting"), stderr
    assert stderr.count("\n") == 1, stderr
    assert stdout == "" and not out.exists()
