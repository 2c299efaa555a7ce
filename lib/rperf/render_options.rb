# frozen_string_literal: true

# Rperf::RenderOptions checks the keywords of a Report view (to_summary,
# to_timeline, to_dot, ...) with the ranges the rperf-gvl CLI accepts, and
# turns them into the Hash the extension's renderer reads. Every error is an
# ArgumentError naming the option, the value and what is allowed; unknown
# keywords are refused. It does NOT render anything.
module Rperf
  module RenderOptions
    BY = %w[thread label ractor].freeze
    # Wait-graph edges (the CLI's --edges): GVL waits, release edges of blocked threads, or both.
    EDGES = %w[gvl blocked all].freeze
    # Profile views keep the samples of one state (the CLI's --state).
    STATES = %w[running gvl_wait blocked gc].freeze
    # The wait graph's edges to the roots of wait chains, the profile views'
    # weights by who made others wait (the CLI's --blame).
    BLAME = %w[direct root].freeze
    COLOR = { true => true, false => false, nil => false, "always" => true, "never" => false }.freeze
    WIDTH = (1..10_000).freeze
    TOP = (1..1_000_000).freeze
    # Times and ids reach the analysis module as signed 64-bit integers.
    INT64_MAX = (1 << 63) - 1

    CHECKS = {
      width: ->(v) { check_integer(:width, v, WIDTH) },
      color: ->(v) { check_color(v) },
      ascii: ->(v) { check_boolean(:ascii, v) },
      by: ->(v) { check_choice(:by, v, BY) },
      edges: ->(v) { check_choice(:edges, v, EDGES) },
      min_share: ->(v) { check_share(v) },
      from_ns: ->(v) { check_integer(:from_ns, v, 0..INT64_MAX) },
      to_ns: ->(v) { check_integer(:to_ns, v, 1..INT64_MAX) },
      thread: ->(v) { check_thread(v) },
      ractor: ->(v) { check_integer(:ractor, v, 1..INT64_MAX) },
      labels: ->(v) { check_labels(v) },
      top: ->(v) { check_integer(:top, v, TOP) },
      state: ->(v) { check_choice(:state, v, STATES) },
      blame: ->(v) { check_choice(:blame, v, BLAME) },
      thread_root: ->(v) { check_boolean(:thread_root, v) },
      label_root: ->(v) { check_boolean(:label_root, v) }
    }.freeze
    NAMES = CHECKS.keys.freeze

    module_function

    # opts: the view's keywords. Returns a new Hash of checked values.
    def normalize(opts)
      out = {}
      opts.each do |name, value|
        check = CHECKS[name]
        unless check
          raise ArgumentError, "unknown rendering option #{name.inspect}; expected one of #{NAMES.join(', ')}"
        end

        out[name] = check.call(value) unless value.nil?
      end
      if out[:to_ns] && out[:to_ns] <= out.fetch(:from_ns, 0)
        raise ArgumentError, "to_ns: #{out[:to_ns]} is invalid; it must be after from_ns (#{out.fetch(:from_ns, 0)})"
      end
      out
    end

    def check_integer(name, value, range)
      return value if value.is_a?(Integer) && range.cover?(value)

      expected = range.end ? "from #{range.begin} to #{range.end}" : ">= #{range.begin}"
      raise ArgumentError, "#{name}: #{value.inspect} is invalid; expected an Integer #{expected}"
    end

    def check_boolean(name, value) = SamplerOptions.check_boolean(name, value)

    def check_color(value)
      key = value.is_a?(Symbol) ? value.name : value
      COLOR.fetch(key) do
        raise ArgumentError, "color: #{value.inspect} is invalid; expected true, false, :always or :never"
      end
    end

    # One of a fixed list of names (String or Symbol), as a String.
    def check_choice(option, value, names)
      name = value.is_a?(Symbol) ? value.name : value
      return name if names.include?(name)

      raise ArgumentError, "#{option}: #{value.inspect} is invalid; expected one of #{names.join(', ')}"
    end

    def check_share(value)
      return value.to_f if value.is_a?(Numeric) && value.real? && value >= 0 && value <= 1

      raise ArgumentError, "min_share: #{value.inspect} is invalid; expected a fraction between 0 and 1"
    end

    # A thread seq (Integer) or an exact thread name.
    def check_thread(value)
      return value.to_s if (value.is_a?(Integer) && value.between?(1, INT64_MAX)) || (value.is_a?(String) && !value.empty?)

      raise ArgumentError, "thread: #{value.inspect} is invalid; expected a thread seq (Integer >= 1) or a name"
    end

    # ["key=value", ...] (or a Hash { key => value }), all must match. A
    # NUL in a value is written \x00, as the analysis reads it from a report.
    def check_labels(value)
      list = value.is_a?(Hash) ? value.map { |k, v| "#{k}=#{v}" } : value
      unless list.is_a?(Array) && list.all? { |s| s.is_a?(String) && s.index("=").to_i.positive? }
        raise ArgumentError, "labels: #{value.inspect} is invalid; expected an Array of \"key=value\" Strings"
      end

      list.map { |s| s.gsub("\0", "\\x00") }
    end
  end
end
