# frozen_string_literal: true

# examples/lock_contention.rb, run as the guide runs it (a child process that
# saves its report): the workers' blocked time is mostly `mutex`, every mutex
# wait that names a releaser names another worker, and the summary it prints
# says so in the sections the guide quotes; the root causes of the workers'
# Mutex waits are the workers' sleeps inside the lock (the query).
require "test/unit"
require "json"
require "open3"
require "rbconfig"
require "timeout"
require "tmpdir"
require "rperf"

class TestExampleLockContention < Test::Unit::TestCase
  ROOT = File.expand_path("../..", __dir__)

  def test_the_lock_not_the_gvl
    Dir.mktmpdir do |dir|
      path = File.join(dir, "lock.json")
      prefix = RbConfig::CONFIG["prefix"]
      flags = $LOAD_PATH.reject { |d| d.start_with?(prefix) }.flat_map { |d| ["-I", File.expand_path(d)] }
      out, err, status = Timeout.timeout(60) do
        Open3.capture3(RbConfig.ruby, *flags, File.join(ROOT, "examples", "lock_contention.rb"), path)
      end
      assert_true(status.success?, err)
      assert_match(/^Blocked by cause \(per thread\)$/, out)
      assert_match(/^Top releasers \(who woke blocked threads\)$/, out)
      assert_match(/^Top release stacks .*\n.*\n.*Thread::Mutex#synchronize < Object#run_query/, out,
                   "the lock blame names the method that held the lock")

      doc = JSON.parse(File.read(path))
      workers = doc["threads"].select { |t| t["name"].start_with?("worker-") }
      assert_equal(6, workers.size)
      workers.each do |t|
        causes = t.fetch("blocked_by_cause")
        assert_equal(t["blocked_ns"], causes.values.sum, t["name"])
        # 5 queries of 20 ms under the lock, 6 workers: each waits for others' queries
        assert_operator(causes.fetch("mutex", 0), :>, causes.fetch("sleep", 0), t["name"])
        # and the lock, not the GVL, is what they waited for: they hardly run
        # Ruby, so a GVL wait is a wake-up waiting for its turn (for a CPU
        # too on a busy machine: 208 ms against 581 ms of mutex under ASan),
        # while the lock waits for the others' queries
        assert_operator(t["gvl_wait_ns"], :<, causes.fetch("mutex", 0), t["name"])
        assert_operator(t["running_ns"], :<, causes.fetch("mutex", 0) / 10, t["name"])
      end
      seqs = workers.map { |t| t["seq"] }
      mutex_edges = doc.fetch("blocked_edges").select { |e| e["cause"] == "mutex" }
      assert_not_empty(mutex_edges)
      mutex_edges.each do |e|
        assert_include(seqs, e["releaser"])
        assert_not_equal(e["waiter"], e["releaser"])
      end
      released = mutex_edges.sum { |e| e["blocked_ns"] }
      total_mutex = workers.sum { |t| t["blocked_by_cause"].fetch("mutex", 0) }
      assert_operator(released, :>=, 0.8 * total_mutex, "most lock waits name who released them")
      from_query = mutex_edges.select do |e|
        e["releaser_stack"] && doc["stacks"][e["releaser_stack"]].any? { |f| doc["frames"][f][1] == "Object#run_query" }
      end
      assert_operator(from_query.sum { |e| e["blocked_ns"] }, :>=, 0.9 * released,
                      "the releases come from the query that held the lock")

      assert_match(/^Root causes \(who, at the end of each wait chain/, out)
      roots = JSON.parse(Rperf::Report.load(path).to_summary_json)["root_causes"]
      waits = roots["waiters"].select { |r| seqs.include?(r["waiter"]) && r["wait"] == "blocked" }
      in_query = waits.select { |r| seqs.include?(r["thread"]) && r["cause"] == "sleep" }
      assert_operator(in_query.sum { |r| r["ns"] }, :>=, 0.95 * waits.sum { |r| r["ns"] },
                      "the workers' sleeps under the lock are the root of their Mutex waits")
      top = roots["roots"].find { |r| r["cause"] == "sleep" }
      assert_match(/Kernel#sleep < .*run_query/, top["stacks"].first["text"])
    end
  end
end
