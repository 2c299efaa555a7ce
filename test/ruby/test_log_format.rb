# frozen_string_literal: true

# Log line formats, the path normaliser and the label cardinality cap:
# the pure-Ruby parts of the contention log.
require "test/unit"
require "json"
require "rperf/contention_log"

class TestLogFormat < Test::Unit::TestCase
  F = Rperf::Log::Format

  # A small logfmt reader written from the format's rules, used to check
  # that what the writer quotes and escapes reads back to the same values.
  def parse_logfmt(line)
    out = {}
    s = line.dup
    until s.empty?
      s.lstrip!
      key = s.slice!(/\A[^ =]+/) or break
      if s.start_with?("=\"")
        s.slice!(0, 2)
        val = +""
        until s.start_with?("\"")
          if s.start_with?("\\")
            c = s[1]
            val << { "n" => "\n", "r" => "\r", "t" => "\t" }.fetch(c, c)
            s.slice!(0, 2)
          else
            val << s.slice!(0)
          end
        end
        s.slice!(0)
        out[key] = val
      elsif s.start_with?("=")
        s.slice!(0)
        out[key] = s.slice!(/\A[^ ]*/)
      else
        out[key] = true
      end
    end
    out
  end

  def test_logfmt_quotes_only_what_needs_it_and_round_trips
    values = ["GET /users/:id", "plain", "", "a=b", "say \"hi\"", "back\\slash", "line\nbreak", "tab\there"]
    values.each do |v|
      line = F.logfmt("label.endpoint" => v, "n" => 3)
      parsed = parse_logfmt(line)
      assert_equal(v, parsed["label.endpoint"], "value #{v.inspect} written as #{line}")
      assert_equal("3", parsed["n"])
      assert_equal(1, line.lines.size, "one line for #{v.inspect}")
    end
    assert_equal("k=plain", F.logfmt(k: "plain"))
  end

  def test_unsafe_keys_are_replaced_and_nil_values_skipped
    line = F.logfmt("label.bad key=" => "x", :skip => nil, :ok => 1)
    assert_equal({ "label.bad_key_" => "x", "ok" => "1" }, parse_logfmt(line))
  end

  def test_floats_have_at_most_three_decimals_and_no_exponent
    assert_equal("12.346", F.format_float(12.3456))
    assert_equal("0", F.format_float(0.00001))
    assert_equal("1.5", F.format_float(1.5))
    assert_equal("3", F.format_float(3.0))
    assert_equal("0", F.format_float(Float::NAN))
  end

  def test_json_has_the_same_keys_in_the_same_order
    fields = { kind: "request", "label.endpoint": "GET /x", wall_ms: 1.25, threads: 1, error: nil }
    obj = JSON.parse(F.json(fields))
    assert_equal(%w[kind label.endpoint wall_ms threads], obj.keys)
    assert_equal(parse_logfmt(F.logfmt(fields)).keys, obj.keys)
    assert_equal(1.25, obj["wall_ms"])
  end

  # The line's numbers come from C: milliseconds read as Format.format_float
  # of ns / 1e6 would, integers as Integer#to_s; bad arguments append nothing.
  def test_numbers_in_c_read_as_the_ruby_formats
    append = ->(*args) { Rperf.__send__(:_c_append_numbers, *args) }
    values = [0, 1, 499, 500, 501, 999_499, 999_500, 1_000_000, 1_000_500, 1_234_567, 10_050_000, 999_999_999,
              (1 << 62) + 12_345, 2**63 - 1] + Array.new(2000) { rand(10**rand(1..15)) }
    values.each do |ns|
      assert_equal " x=#{F.format_float(ns / 1e6)}", append.(+"", true, [" x="], ns), ns.to_s if ns < 1 << 52
      assert_equal ",\"y\":#{ns}", append.(+"", false, [",\"y\":"], ns), ns.to_s
    end
    assert_equal " a=1.5 b=0 c=2", append.(+"", true, [" a=", " b=", " c="], 1_500_000, -7, 2_000_000)
    out = +"line"
    [[out, true, [" a="], "1"], [out, true, [" a="], 1.5], [out, true, [" a="], 1, 2], [out, true, [:a], 1],
     [out, true, " a=", 1], [nil, true, [" a="], 1], [out, true]].each do |args|
      assert_raise(TypeError, ArgumentError, args.inspect) { append.(*args) }
    end
    assert_equal "line", out
  end

  def test_format_names_are_validated
    assert_equal(:json, F.validate("json"))
    assert_equal(:json, F.validate(:json_lines))
    assert_equal(:logfmt, F.validate(:logfmt))
    e = assert_raise(ArgumentError) { F.validate(:xml) }
    assert_match(/:logfmt or :json/, e.message)
  end
end

class TestLogPathNormalizer < Test::Unit::TestCase
  N = Rperf::Log::PathNormalizer

  def test_ids_uuids_and_tokens_become_placeholders
    {
      "/users/123" => "/users/:id",
      "/users/123/posts/9" => "/users/:id/posts/:id",
      "/orders/550e8400-e29b-41d4-a716-446655440000" => "/orders/:uuid",
      "/blobs/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b" => "/blobs/:hex",
      "/users/123.json" => "/users/:id.json",
      "/users/123?page=2" => "/users/:id",
      "/users/" => "/users",
      "/" => "/",
      "" => "/",
      "/health" => "/health",
      "/v2/deadbeef" => "/v2/deadbeef", # short hex words stay: they are often names
      "/files/report.pdf" => "/files/report.pdf"
    }.each { |raw, want| assert_equal(want, N.normalize(raw), raw) }
  end

  def test_very_long_or_deep_paths_are_bounded
    assert_equal("/x/:long", N.normalize("/x/#{'a' * 100}"))
    deep = N.normalize("/a" * 100)
    assert_equal(Rperf::Log::PathNormalizer::MAX_SEGMENTS + 1, deep.count("/"))
    assert(deep.end_with?("/..."))
  end
end

class TestLogLabelCap < Test::Unit::TestCase
  def test_sets_beyond_the_cap_fold_into_other_and_are_counted
    cap = Rperf::Log::LabelCap.new(max_label_sets: 3)
    admitted = (1..10).map { |i| cap.admit(endpoint: "GET /item/#{i}") }
    assert_equal(%w[1 2 3].map { |i| "GET /item/#{i}" }, admitted.first(3).map { |l| l[:endpoint] })
    assert_equal([{ endpoint: "other" }], admitted.drop(3).uniq)
    assert_equal(7, cap.overflowed)
    assert_equal(3, cap.size)
    # an admitted set stays admitted after the cap is reached
    assert_equal({ endpoint: "GET /item/2" }, cap.admit(endpoint: "GET /item/2"))
    assert_equal(7, cap.overflowed)
  end

  def test_label_order_and_key_type_do_not_make_new_sets
    cap = Rperf::Log::LabelCap.new(max_label_sets: 1)
    a = cap.admit(job: "A", queue: "q")
    b = cap.admit("queue" => "q", "job" => "A")
    assert_equal(a, b)
    assert_equal(0, cap.overflowed)
  end

  def test_keys_invented_by_a_labeller_end_in_one_bucket
    cap = Rperf::Log::LabelCap.new(max_label_sets: 1)
    cap.admit(a: "1")
    buckets = 200.times.map { |i| cap.admit("k#{i}": "v") }.uniq
    assert_operator(buckets.size, :<=, Rperf::Log::LabelCap::MAX_OTHER_SHAPES + 1)
    assert_include(buckets, Rperf::Log::LabelCap::LAST_RESORT)
  end

  def test_long_values_are_truncated
    cap = Rperf::Log::LabelCap.new(max_value_bytes: 16)
    assert_equal("x" * 16, cap.admit(k: "x" * 1000)[:k])
    assert_raise(ArgumentError) { Rperf::Log::LabelCap.new(max_label_sets: 0) }
  end

  def test_cap_holds_under_concurrent_admission
    cap = Rperf::Log::LabelCap.new(max_label_sets: 50)
    threads = 4.times.map { |t| Thread.new { 100.times { |i| cap.admit(id: "#{t}-#{i}") } } }
    threads.each(&:join)
    assert_equal(50, cap.size)
    assert_equal(350, cap.overflowed)
  end
end
