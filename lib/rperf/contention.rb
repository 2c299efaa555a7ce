# frozen_string_literal: true

# Rperf.contention and Rperf::Contention::Report — exact GVL contention
# accounting for a block of code (or, without a block, from now until
# Rperf.contention_stop / Session#stop), returned as a Report over the
# report.json v1 document (docs/report-format.md).
#
# The Report is a thin, frozen reader: its tables come straight from the
# report hash, and every rendering (summary, timeline, DOT, SVG, Perfetto)
# is done by the C analysis module linked into the extension, so the Ruby
# API and the rperf-gvl CLI print the same bytes. Its JSON text and the
# analysis module's parse of it are made once and reused. It does NOT
# measure anything itself.
require "json"
require "zlib"

module Rperf
  module Contention
    DEFAULTS = { frequency: LIMITS[:frequency][:default], mode: :wall, timeline: true }.freeze

    # A profile started by Rperf.contention without a block.
    class Session
      def initialize
        @report = nil
      end

      # Stops the profile and returns its Report (the same one on repeated calls).
      def stop
        @report ||= begin
          raise StateError, "rperf: the contention profile is no longer running" unless Rperf.running?

          Report.new(Rperf.stop_report)
        end
      end

      # The report so far; with clear: true the next one starts here.
      def snapshot(clear: false)
        raise StateError, "rperf: the contention profile is no longer running" unless Rperf.running?

        Report.new(Rperf.snapshot_report(clear: clear))
      end

      def running?
        @report.nil? && Rperf.running?
      end
    end

    # Read-only views of the report's rows (Symbol keys, report units: ns).
    ThreadRow = Struct.new(:seq, :name, :native_id, :ractor, :first_seen_ns, :last_seen_ns, :exited,
                           :running_ns, :gvl_wait_ns, :blocked_ns, :gc_mark_ns, :gc_sweep_ns,
                           :acquisitions, :waits, keyword_init: true) do
      def lifetime_ns = last_seen_ns - first_seen_ns
      def gc_ns = gc_mark_ns + gc_sweep_ns
      def accounted_ns = running_ns + gvl_wait_ns + blocked_ns + gc_ns
      # Share of the thread's lifetime spent waiting for the GVL (0.0..1.0).
      def gvl_wait_share = lifetime_ns.positive? ? gvl_wait_ns.fdiv(lifetime_ns) : 0.0
    end

    EdgeRow = Struct.new(:ractor, :waiter, :holder_kind, :holder, :waiter_label_set, :holder_label_set,
                         :wait_ns, :count, keyword_init: true)

    STATE_KEYS = %w[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze

    # The timeline of a report built by this process ("intervals"): tuples
    # [thread_seq, state, start_ns, end_ns, label_set_id, stack_id] kept
    # packed by the extension, made into Arrays only when read. Behaves as
    # a frozen Array for reading; #to_json writes the whole list in C.
    # (size, at, each and to_json are defined by the extension.)
    if const_defined?(:Intervals, false)
      class Intervals
        include Enumerable

        def length = size
        def empty? = size.zero?
        def last = at(-1)

        # at(i), or anything Array#[] takes, through a copy.
        def [](*args)
          args.size == 1 && args[0].is_a?(Integer) ? at(args[0]) : to_a[*args]
        end

        def ==(other)
          other.respond_to?(:to_a) && other.respond_to?(:size) && size == other.size && to_a == other.to_a
        end

        def inspect = "#<#{self.class} size=#{size}>"

        # Immutable: a copy is the same list.
        def dup = self
        def clone(freeze: true) = freeze ? self : to_a
      end
    end

    class Report
      STATES = %i[running gvl_wait blocked gc_mark gc_sweep].freeze

      # Reads a report written by #save (plain or gzip JSON). Raises
      # Rperf::ReportError naming the problem for malformed reports.
      def self.load(path)
        data = File.binread(path)
        from_json(data, source: path)
      rescue SystemCallError => e
        raise ReportError, "#{path}: cannot read (#{e.message})"
      end

      def self.from_json(json, source: "report")
        json = Zlib.gunzip(json) if json.getbyte(0) == 0x1f && json.getbyte(1) == 0x8b
        parsed = nil
        if Rperf::HAVE_ANALYSIS
          begin
            parsed = Rperf.__send__(:_c_parse_report, json) # full validation by the analysis module
          rescue Rperf::ReportError => e
            raise ReportError, "#{source}: #{e.message}"
          end
        end
        new(parse_json(json, parsed, source), source: source, json: json, parsed: parsed)
      rescue Zlib::Error => e
        raise ReportError, "#{source}: not a valid gzip file (#{e.message})"
      end

      # The report Hash of json. With the analysis module's parse at hand,
      # the timeline (most of a large report) is taken from it packed, and
      # Ruby's parser reads only the rest of the text.
      def self.parse_json(json, parsed, source)
        offset, length, intervals = parsed && Rperf.__send__(:_c_parsed_intervals, parsed)
        if intervals
          rest = json.byteslice(0, offset) << "[]" << json.byteslice(offset + length, json.bytesize)
          JSON.parse(rest, freeze: true).merge("intervals" => intervals)
        else
          JSON.parse(json, freeze: true)
        end
      rescue JSON::ParserError => e
        raise ReportError, "#{source}: invalid JSON: #{e.message.lines.first&.strip}"
      end
      private_class_method :parse_json

      # The report's data (report.json v1 as a Hash), frozen: a Report is a
      # read-only view, so its JSON is generated once and reused.
      attr_reader :to_h

      def initialize(hash, source: "report", json: nil, parsed: nil)
        unless hash.is_a?(Hash) && hash["format"] == "rperf-gvl-report"
          raise ReportError, "#{source}: not an rperf-gvl report (\"format\" is missing or wrong)"
        end
        unless hash["version"] == 1
          raise ReportError, "#{source}: unsupported report version #{hash['version'].inspect} " \
                             "(this reader supports 1)"
        end
        %w[meta stats threads edges].each do |key|
          raise ReportError, "#{source}: missing key \"#{key}\"" unless hash.key?(key)
        end
        @to_h = deep_freeze(hash)
        @json = json && json.dup.force_encoding(Encoding::UTF_8).freeze # the text read is the text saved
        @parsed = parsed
      end

      # Marshal carries the report as its JSON text.
      def marshal_dump = to_json

      def marshal_load(json)
        copy = Report.from_json(json)
        copy.instance_variables.each { |name| instance_variable_set(name, copy.instance_variable_get(name)) }
      end

      def meta = @to_h["meta"]
      def stats = @to_h["stats"]
      def duration_ns = meta["duration_ns"]
      def intervals = @to_h.fetch("intervals", [])
      def label_sets = @to_h.fetch("label_sets", [])
      def label_totals = @to_h.fetch("label_totals", [])
      def ractors = @to_h.fetch("ractors", []).map { |r| r.transform_keys(&:to_sym) }

      def threads
        @threads ||= @to_h["threads"].map do |t|
          ThreadRow.new(**t.slice(*ThreadRow.members.map(&:to_s)).transform_keys(&:to_sym))
        end
      end

      def thread(seq_or_name)
        threads.find { |t| t.seq == seq_or_name || t.name == seq_or_name }
      end

      def edges
        @edges ||= @to_h["edges"].map do |e|
          EdgeRow.new(**e.slice(*EdgeRow.members.map(&:to_s)).transform_keys(&:to_sym))
        end
      end

      # Totals per label set over all threads:
      # [{ id:, labels: {String => String}, running_ns:, ... }], largest first.
      def labels
        sets = label_sets.to_h { |s| [s["id"], s["labels"]] }
        rows = Hash.new { |h, id| h[id] = STATE_KEYS.to_h { |k| [k.to_sym, 0] } }
        label_totals.each do |row|
          STATE_KEYS.each { |k| rows[row["label_set"]][k.to_sym] += row[k] }
        end
        rows.map { |id, totals| { id: id, labels: sets.fetch(id, {}) }.merge(totals) }
            .sort_by { |r| -STATE_KEYS.sum { |k| r[k.to_sym] } }
      end

      # Sum of a waiter's edges (ns) by thread seq.
      def edge_sums
        edges.each_with_object(Hash.new(0)) { |e, h| h[e.waiter] += e.wait_ns }
      end

      def to_json(*_args)
        @json ||= JSON.generate(@to_h).freeze
      end

      # zlib level of save(".gz"): on a 23 MB timeline-heavy report level 3
      # took 0.5 s for 6.3 MB, the default level 6 1.3 s for 5.7 MB.
      GZIP_LEVEL = 3

      # Profile formats chosen by save from the file name, before ".gz".
      PROFILE_EXTENSIONS = { ".pb.gz" => "pprof", ".collapsed" => "collapsed", ".folded" => "collapsed",
                             ".speedscope.json" => "speedscope" }.freeze

      # Writes report.json (gzip-compressed when the name ends in .gz), or a
      # profile: .pb.gz pprof, .collapsed/.folded folded stacks,
      # .speedscope.json speedscope. The bytes are rendered before the file
      # is opened, so a failed rendering leaves no file behind; a report
      # without samples writes a valid empty profile and warns.
      def save(path)
        ext = PROFILE_EXTENSIONS.keys.find { |e| path.to_s.end_with?(e) }
        if ext
          data = render(PROFILE_EXTENSIONS[ext], {})
          warn "rperf: the report has no samples; #{path} is an empty profile" if @to_h.fetch("samples", []).empty?
          File.binwrite(path, data)
          return path
        end

        json = to_json
        if path.to_s.end_with?(".gz")
          Zlib::GzipWriter.open(path, GZIP_LEVEL) { |gz| gz.write(json) }
        else
          File.binwrite(path, json)
        end
        path
      end

      # Renderings by the analysis module. Options as in the CLI:
      # width:, color:, ascii:, by: ("thread"|"label"|"ractor"), min_share:,
      # from_ns:, to_ns:, thread:, ractor:, labels: ["k=v"], top:.
      def summary(**opts) = render("summary", opts)
      def timeline(**opts) = render("timeline", opts)
      def to_dot(**opts) = render("dot", opts)
      def to_svg(**opts) = render("svg", opts)
      def perfetto(**opts) = render("perfetto", opts)
      def summary_json(**opts) = render("json", opts)
      # Profiles of the samples (filters as above, and state: "running" |
      # "gvl_wait" | "blocked" | "gc"): gzip'd pprof bytes, folded stacks
      # (thread_root:, label_root: add root frames), speedscope JSON, and
      # the flat/cumulative text view.
      def to_pprof(**opts) = render("pprof", opts)
      def to_collapsed(**opts) = render("collapsed", opts).force_encoding(Encoding::UTF_8)
      def to_speedscope(**opts) = render("speedscope", opts).force_encoding(Encoding::UTF_8)
      def to_top(**opts) = render("top", opts).force_encoding(Encoding::UTF_8)

      def inspect
        "#<Rperf::Contention::Report threads=#{threads.size} duration_ns=#{duration_ns}>"
      end

      private

      def deep_freeze(value)
        return value if value.frozen?

        case value
        when Hash then value.each_value { |v| deep_freeze(v) }
        when Array then value.each { |v| deep_freeze(v) }
        end
        value.freeze
      end

      def render(view, opts)
        unless Rperf::HAVE_ANALYSIS
          raise UnsupportedError, "rperf: this build has no analysis module (needed for #{view})"
        end

        @parsed ||= Rperf.__send__(:_c_parse_report, to_json)
        Rperf.__send__(:_c_render, @parsed, view, opts)
      end
    end
  end

  class << self
    # Exact contention accounting. With a block: profiles it and returns a
    # Contention::Report. Without: starts and returns a Contention::Session
    # (stop it with session.stop or Rperf.contention_stop), for servers.
    # Keywords: frequency: (sampler Hz, 1000), mode: (:wall), timeline:
    # (true), and every other keyword of Rperf.start.
    def contention(**opts)
      opts = Contention::DEFAULTS.merge(opts)
      start(**opts)
      @contention_session = Contention::Session.new
      return @contention_session unless block_given?

      begin
        yield
      ensure
        report = @contention_session.stop if running?
        @contention_session = nil
      end
      report
    end

    # Stops the profile started by Rperf.contention without a block and
    # returns its Report.
    def contention_stop
      session = @contention_session
      raise StateError, "rperf: no contention profile is running" unless session && running?

      @contention_session = nil
      session.stop
    end
  end
end
