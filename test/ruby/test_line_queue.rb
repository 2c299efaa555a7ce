# frozen_string_literal: true

# Rperf::LineQueue (ext/rperf/line_queue.h), the log writer's queue: lines
# come out whole, in order, each with its newline; past max_lines they are
# dropped and counted; a push says when no writer serves the queue, and a
# writer can only retire from an empty one; a push from another process
# (a fork child) drops what the parent queued.
require "rperf"
require "test/unit"

class TestLineQueue < Test::Unit::TestCase
  def test_lines_come_out_whole_in_order_and_bounded
    q = Rperf::LineQueue.new(3)
    pid = Process.pid
    assert_equal false, q.push("a=1", pid), "no writer serves it yet"
    assert q.serve(pid)
    assert_equal 2, q.push("b=\u00e9", pid)
    assert_equal 3, q.push("", pid)
    assert_nil q.push("dropped", pid)
    assert_nil q.push("dropped too", pid)
    assert_equal [3, 3, 2], [q.size, q.accepted, q.dropped]
    text, lines = q.take
    assert_equal ["a=1\nb=\u00e9\n\n", 3], [text, lines]
    assert_equal Encoding::UTF_8, text.encoding
    assert_nil q.take, "empty after a take"
    assert_equal 1, q.push("c", pid), "room again"
    assert_equal [4, 2], [q.accepted, q.dropped]
  end

  def test_a_writer_retires_only_from_an_empty_queue
    q = Rperf::LineQueue.new(10)
    q.serve(Process.pid)
    q.push("x", Process.pid)
    refute q.retire, "a line waits"
    q.take
    assert q.retire
    assert_equal false, q.push("y", Process.pid), "the next line needs a writer again"
  end

  def test_a_push_from_another_process_drops_the_parents_lines
    q = Rperf::LineQueue.new(10)
    q.serve(Process.pid)
    2.times { |i| q.push("parent #{i}", Process.pid) }
    assert_equal false, q.push("child", Process.pid + 1), "the child's writer is not running"
    assert_equal ["child\n", 1], q.take
  end

  def test_bad_arguments_raise_before_anything_changes
    assert_raise(ArgumentError) { Rperf::LineQueue.new(0) }
    q = Rperf::LineQueue.new(2)
    assert_raise(TypeError) { q.push(nil, Process.pid) }
    assert_raise(TypeError) { q.push("x", "pid") }
    assert_equal [0, 0, 0], [q.size, q.accepted, q.dropped]
    big = "k=#{'v' * 100_000}"
    q.push(big, Process.pid)
    assert_equal "#{big}\n", q.take[0], "a line longer than the first buffer"
  end
end
