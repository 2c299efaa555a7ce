# frozen_string_literal: true

# The job runner and IO pool examples, run as users run them (one command,
# a child process): every job or task writes one parseable line with the
# right labels, failures carry their error, and the whole-run lines at the
# end hold the same time as the per-unit lines of each label set.
require "test/unit"
require "json"
require "open3"
require "rbconfig"
require "timeout"

class TestLogExamples < Test::Unit::TestCase
  ROOT = File.expand_path("../..", __dir__)

  def run_example(name, *args)
    prefix = RbConfig::CONFIG["prefix"]
    flags = $LOAD_PATH.reject { |d| d.start_with?(prefix) }.flat_map { |d| ["-I", File.expand_path(d)] }
    out, err, status = Timeout.timeout(60) do
      Open3.capture3(RbConfig.ruby, *flags, File.join(ROOT, "examples", name), *args)
    end
    assert_true(status.success?, "#{name} failed: #{err}")
    lines = out.lines.reject { |l| l.start_with?("#") || l.strip.empty? }
    lines.map { |l| JSON.parse(l) }
  end

  # Whole-run lines sum each label set over the run: the same time as the
  # unit lines of that label set (a few µs per unit for setting the label).
  def assert_whole_run_matches(units, whole, label_keys)
    assert_not_empty(units, "units of work were logged")
    units.group_by { |l| l.values_at(*label_keys) }.each do |key, rows|
      line = whole.find { |w| w.values_at(*label_keys) == key }
      assert_not_nil(line, "a whole-run line for #{key.inspect}")
      wall = rows.sum { |r| r["wall_ms"] }
      assert_in_delta(wall, line["total_ms"], 0.02 * wall + 0.05 * rows.size + 1.0, key.inspect)
      # each unit ran on one thread: no more threads than units carried the set
      assert_operator(line["threads"], :<=, rows.size)
    end
  end

  def test_job_runner_logs_every_job_by_class_and_queue
    lines = run_example("job_runner.rb", "--format", "json", "--jobs", "24", "--workers", "4")
    jobs = lines.select { |l| l["kind"] == "job" }
    # 24 jobs of three kinds plus one BuildReport
    counts = jobs.group_by { |l| [l["label.job"], l["label.queue"]] }.transform_values(&:size)
    assert_equal({ %w[ResizeImage media] => 8, %w[SendEmail mail] => 8, %w[FlakyImport default] => 8,
                   %w[BuildReport reports] => 1 }, counts)
    assert_equal(25, jobs.map { |l| l["job_id"] }.uniq.size)
    failed = jobs.select { |l| l["error"] }
    assert_not_empty(failed)
    assert(failed.all? { |l| l["label.job"] == "FlakyImport" && l["error"].end_with?("ImportError") })
    # SendEmail waits 30 ms on its server: blocked, not running
    jobs.select { |l| l["label.job"] == "SendEmail" }.each { |l| assert_operator(l["blocked_ms"], :>=, 25.0) }
    report = jobs.find { |l| l["label.job"] == "BuildReport" }
    assert_operator(report["running_ms"], :>, 0.5 * report["wall_ms"])

    whole = lines.select { |l| l["kind"] == "interval" }
    assert_whole_run_matches(jobs, whole, %w[label.job label.queue])
  end

  def test_io_pool_logs_every_task_for_both_pool_sizes
    lines = run_example("io_pool.rb", "--format", "json", "--tasks", "16")
    tasks = lines.select { |l| l["kind"] == "task" }
    assert_equal({ "4" => 16, "32" => 16 }, tasks.group_by { |l| l["label.pool"] }.transform_values(&:size))
    # each task waits 20 ms for its pretend server
    tasks.each { |l| assert_operator(l["blocked_ms"], :>=, 15.0, l.inspect) }
    whole = lines.select { |l| l["kind"] == "interval" }
    assert_whole_run_matches(tasks, whole, %w[label.pool])
  end
end
