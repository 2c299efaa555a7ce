# frozen_string_literal: true

# Rperf::Report — the one result object of the profiler: Rperf.stop,
# Rperf.snapshot, Rperf.contention (block and session) and Report.load all
# return one. It is a frozen reader over a report.json v1 document
# (docs/report-format.md): rows (report_rows.rb), views rendered by the C
# analysis module linked into the extension (so Ruby and the rperf-gvl CLI
# print the same bytes), save(path) choosing the format from the name, and
# the rperf 0.7 reads (classic.rb). Its JSON text and the analysis module's
# parse of it are made once and reused.
#
# It does NOT measure anything, and it does not change its document: views,
# rows and classic reads are computed on first use and kept in a private
# cache; the object itself is frozen.
require "json"
require "zlib"
require_relative "report_rows"
require_relative "classic"
require_relative "render_options"

module Rperf
  class Report
    include Classic

    # View method => the analysis module's view name. Views other than the
    # ones this build knows raise ArgumentError naming the known ones.
    VIEWS = {
      to_summary: "summary", to_timeline: "timeline", to_summary_json: "json",
      to_dot: "dot", to_svg: "svg", to_png: "png", to_perfetto: "perfetto",
      to_pprof: "pprof", to_collapsed: "collapsed", to_speedscope: "speedscope",
      to_top: "top", to_html: "html"
    }.freeze
    # Views whose output is bytes, not text.
    BINARY_VIEWS = %w[png pprof].freeze
    # Views of the samples: saved empty (with a warning) when there are none.
    PROFILE_VIEWS = %w[pprof collapsed speedscope].freeze

    # Names save(path) understands, tried in this order (longest first):
    # suffix => format. A format is :json, :json_gz or a view name.
    SAVE_FORMATS = {
      ".perfetto.json" => "perfetto", ".trace.json" => "perfetto", ".speedscope.json" => "speedscope",
      ".json.gz" => :json_gz, ".pb.gz" => "pprof", ".gz" => :json_gz, ".json" => :json,
      ".dot" => "dot", ".svg" => "svg", ".png" => "png", ".collapsed" => "collapsed",
      ".folded" => "collapsed", ".html" => "html", ".txt" => "summary"
    }.freeze
    # save(path, format:) names; :text and :pprof are rperf 0.7's.
    FORMAT_NAMES = {
      json: :json, json_gz: :json_gz, text: "summary", summary: "summary", dot: "dot", svg: "svg",
      png: "png", perfetto: "perfetto", pprof: "pprof", collapsed: "collapsed", speedscope: "speedscope",
      html: "html"
    }.freeze

    # zlib level of gzip saves: on a 23 MB timeline-heavy report level 3
    # took 0.5 s for 6.3 MB, the default level 6 1.3 s for 5.7 MB.
    GZIP_LEVEL = 3
    INFLATE_CHUNK = 1 << 16

    # Stands for the timeline while the rest of the document is generated:
    # JSON.generate splices its to_json verbatim, and a raw NUL is the one
    # byte JSON text never holds (strings escape it), so it marks where the
    # timeline is streamed in.
    class TimelineMark
      def to_json(*) = "\0"
    end
    TIMELINE_MARK = TimelineMark.new.freeze
    # The keys whose packed lists write_json streams (the timeline and its causes).
    STREAMED_KEYS = %w[intervals interval_causes].freeze

    class << self
      # Reads a report written by #save (plain or gzip JSON). A gzip file may
      # inflate to at most max_bytes (Rperf::LIMITS[:report_inflated_bytes]
      # by default). Raises Rperf::ReportError naming the file and the problem.
      def load(path, max_bytes: LIMITS[:report_inflated_bytes])
        data = File.binread(path)
        from_json(data, source: path.to_s, max_bytes: max_bytes)
      rescue SystemCallError => e
        raise ReportError, "#{path}: cannot read (#{e.message})"
      end

      # What save writes for path and format: :json, :json_gz or a view
      # name. Raises ArgumentError for an unknown name or format.
      def format_for(path, format = nil)
        if format
          kind = FORMAT_NAMES.fetch(format.respond_to?(:to_sym) ? format.to_sym : format) do
            raise ArgumentError, "format: #{format.inspect} is invalid; expected one of #{FORMAT_NAMES.keys.join(', ')}"
          end
          return kind == :json && path.to_s.end_with?(".gz") ? :json_gz : kind
        end
        name = path.to_s.downcase
        SAVE_FORMATS.each { |suffix, kind| return kind if name.end_with?(suffix) }
        raise ArgumentError, "#{path}: unknown report file name; it must end in one of " \
                             "#{SAVE_FORMATS.keys.join(', ')} (or pass format:)"
      end

      # A Report from report.json text (plain or gzip).
      def from_json(json, source: "report", max_bytes: LIMITS[:report_inflated_bytes])
        unless max_bytes.is_a?(Integer) && max_bytes.positive?
          raise ArgumentError, "max_bytes: #{max_bytes.inspect} is invalid; expected a positive Integer"
        end

        json = inflate(json, max_bytes, source) if gzip?(json)
        parsed = nil
        if Rperf::HAVE_ANALYSIS
          begin
            parsed = Rperf.__send__(:_c_parse_report, json) # full validation by the analysis module
          rescue ReportError => e
            raise ReportError, "#{source}: #{e.message}"
          end
        end
        new(parse_json(json, parsed, source), source: source, json: json, parsed: parsed)
      end

      private

      def gzip?(data) = data.getbyte(0) == 0x1f && data.getbyte(1) == 0x8b

      # Inflates gzip data a chunk at a time, stopping as soon as the output
      # passes max_bytes (a small file can inflate to gigabytes). Concatenated
      # gzip members are one file, as gzip(1) reads them; anything else after
      # the last member is refused.
      def inflate(data, max_bytes, source)
        out = String.new(encoding: Encoding::BINARY)
        rest = data.b
        while rest
          zs = Zlib::Inflate.new(Zlib::MAX_WBITS + 16)
          begin
            offset = 0
            until zs.finished? || offset >= rest.bytesize
              zs.inflate(rest.byteslice(offset, INFLATE_CHUNK)) do |chunk|
                if out.bytesize + chunk.bytesize > max_bytes
                  raise ReportError, "#{source}: gzip data inflates beyond #{max_bytes} bytes " \
                                     "(raise max_bytes: to read it)"
                end
                out << chunk
              end
              offset += INFLATE_CHUNK
            end
            raise ReportError, "#{source}: truncated gzip data" unless zs.finished?

            trailing = zs.total_in < rest.bytesize ? rest.byteslice(zs.total_in, rest.bytesize) : nil
          ensure
            zs.close
          end
          if trailing && !gzip?(trailing)
            raise ReportError, "#{source}: #{trailing.bytesize} bytes of trailing data after the gzip stream"
          end

          rest = trailing
        end
        out.force_encoding(Encoding::UTF_8)
      rescue Zlib::Error => e
        raise ReportError, "#{source}: not a valid gzip file (#{e.message})"
      end

      # The document Hash of json. With the analysis module's parse at hand,
      # the timeline (most of a large report) is taken from it packed, and
      # Ruby's parser reads only the rest of the text.
      def parse_json(json, parsed, source)
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
    end

    # hash: a report.json v1 document (String keys). json/parsed: its text
    # and the analysis module's parse, when the caller has them.
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
      @doc = deep_freeze(hash)
      # Filled on first use; the only mutable part of a frozen Report.
      @cache = { classic: {} }
      @cache[:json] = json.dup.force_encoding(Encoding::UTF_8).freeze if json # the text read is the text saved
      @cache[:parsed] = parsed if parsed
      freeze
    end

    # The report.json v1 document (frozen, String keys).
    def to_h = @doc

    # Marshal carries the report as its JSON text.
    def marshal_dump = to_json

    def marshal_load(json)
      copy = Report.from_json(json)
      @doc = copy.to_h
      @cache = copy.instance_variable_get(:@cache)
      freeze
    end

    def meta = @doc["meta"]
    def stats = @doc["stats"]
    def duration_ns = meta["duration_ns"]

    # --- rows -------------------------------------------------------------

    def threads = cached(:threads) { @doc["threads"].map { |t| ThreadRow.from_report(t) } }

    # The thread with this seq or name, or nil.
    def thread(seq_or_name)
      threads.find { |t| t.seq == seq_or_name || t.name == seq_or_name }
    end

    def edges = cached(:edges) { @doc["edges"].map { |e| EdgeRow.from_report(e) } }
    def ractors = cached(:ractors) { @doc.fetch("ractors", []).map { |r| RactorRow.from_report(r) } }
    def label_sets = cached(:label_sets) { @doc.fetch("label_sets", []).map { |s| LabelSetRow.from_report(s) } }

    def label_totals
      cached(:label_totals) { @doc.fetch("label_totals", []).map { |r| LabelTotalRow.from_report(r) } }
    end

    # Totals per label set over all threads (LabelRow), largest first.
    def labels
      cached(:labels) do
        names = label_sets.to_h { |s| [s.id, s.labels] }
        sums = Hash.new { |h, id| h[id] = Array.new(STATE_KEYS.size, 0) }
        causes = {}
        label_totals.each do |row|
          totals = sums[row.label_set]
          STATE_KEYS.each_with_index { |k, i| totals[i] += row.public_send(k) }
          row.blocked_by_cause&.each do |cause, ns|
            by_cause = causes[row.label_set] ||= {}
            by_cause[cause] = by_cause.fetch(cause, 0) + ns
          end
        end
        sums.map { |id, totals| LabelRow.new(id, names.fetch(id, {}), *totals, causes[id]&.freeze) }
            .sort_by { |r| [-r.total_ns, r.id] }
      end
    end

    # Release edges (BlockedEdgeRow) and blocked methods (BlockedMethodRow)
    # of report minor 1; empty for older reports.
    def blocked_edges
      cached(:blocked_edges) { @doc.fetch("blocked_edges", []).map { |e| BlockedEdgeRow.from_report(e) } }
    end

    def blocked_methods
      cached(:blocked_methods) { @doc.fetch("blocked_methods", []).map { |m| BlockedMethodRow.from_report(m) } }
    end

    # The timeline (IntervalRows: IntervalRow objects made on read).
    def intervals = cached(:intervals) { IntervalRows.new(@doc.fetch("intervals", [])) }

    # Every wait (GVL wait, and blocked time on a Mutex, ConditionVariable,
    # Queue or join) followed along its chain of waiting threads to its root
    # (RootCauseRow), largest first. View options (thread:, labels:, ...)
    # keep the waits of the threads and label sets they select. A report
    # without a timeline (counters mode) raises RenderError: root causes
    # need a full recording.
    def root_causes(**opts)
      roots = JSON.parse(render("json", opts))["root_causes"]
      raise RenderError, "rperf: #{roots['reason']}" unless roots["available"]

      roots["roots"].map { |row| RootCauseRow.from_report(deep_freeze(row)) }.freeze
    end

    # The critical path of one thread (thread: a seq or an exact name) or of a
    # label (label: { key => value } or "key=value", one pair): its segments
    # and its shares by root cause, as the frozen Hash of the CLI's
    # `--critical-path ... --json` (String keys). from_ns:/to_ns: narrow the
    # window. A report without a timeline raises RenderError.
    def critical_path(thread: nil, label: nil, from_ns: nil, to_ns: nil)
      subject = critical_path_subject(thread, label)
      deep_freeze(JSON.parse(render("critical_path_json", { from_ns: from_ns, to_ns: to_ns }.compact,
                                    critical_path: subject)))
    end

    # The same critical path as text (`rperf-gvl --critical-path`); takes
    # color:, top: (segments listed) and the window.
    def to_critical_path(thread: nil, label: nil, **opts)
      render("critical_path", opts, critical_path: critical_path_subject(thread, label))
    end

    # Sum of a waiter's edges (ns) by thread seq.
    def edge_sums
      cached(:edge_sums) { edges.each_with_object(Hash.new(0)) { |e, h| h[e.waiter] += e.wait_ns } }
    end

    # --- views and files ----------------------------------------------------

    # The report.json text (generated once).
    def to_json(*_args) = cached(:json) { JSON.generate(@doc) }

    # Views rendered by the analysis module, with the CLI's options:
    # width:, color:, ascii:, by:, min_share:, from_ns:, to_ns:, thread:,
    # ractor:, labels:, top: (Rperf::RenderOptions).
    VIEWS.each do |name, view|
      define_method(name) { |**opts| render(view, opts) }
    end

    # Deprecated names of rperf-gvl 0.1: they warn under Warning[:deprecated].
    { summary: :to_summary, timeline: :to_timeline, perfetto: :to_perfetto,
      summary_json: :to_summary_json }.each do |old, new|
      define_method(old) do |**opts|
        Warning.warn("Rperf::Report##{old} is deprecated; use ##{new}\n", category: :deprecated)
        public_send(new, **opts)
      end
    end

    # Writes the report to path in the format its name asks for (SAVE_FORMATS:
    # .json, .json.gz/.gz, .dot, .svg, .png, .perfetto.json/.trace.json,
    # .pb.gz, .collapsed/.folded, .speedscope.json, .html, .txt), or in
    # format: (FORMAT_NAMES). A regular file is replaced only once the whole
    # output is written. Returns path.
    def save(path, format: nil, **opts)
      kind = Report.format_for(path, format)
      case kind
      when :json then write_file(path.to_s) { |io| write_json(io) }
      when :json_gz
        write_file(path.to_s) do |io|
          gz = Zlib::GzipWriter.new(io, GZIP_LEVEL)
          write_json(gz)
          gz.finish
        end
      else
        bytes = render(kind, opts)
        if PROFILE_VIEWS.include?(kind) && @doc.fetch("samples", []).empty?
          warn "rperf: the report has no samples; #{path} is an empty profile"
        end
        write_file(path.to_s) { |io| io.write(bytes) }
      end
      path
    end

    # Writes the report.json text to io (anything with #write). A timeline
    # kept encoded is streamed a chunk at a time, so a large report is
    # written without its whole text in memory; the same bytes as to_json.
    def write_json(io)
      packed = @doc.keys.select { |key| STREAMED_KEYS.include?(key) && @doc[key].respond_to?(:write_json) }
      return io.write(to_json) if @cache.key?(:json) || packed.empty?

      text = JSON.generate(@doc.merge(packed.to_h { |key| [key, TIMELINE_MARK] }))
      bytes = text.b # byte offsets to find the marks; the slices written stay UTF-8
      marks = [] # in the Hash's order, which JSON.generate keeps
      packed.each { marks << bytes.index("\0", marks.empty? ? 0 : marks.last + 1) }
      io.write(text.byteslice(0, marks[0]))
      intervals = @doc["intervals"]
      if packed == STREAMED_KEYS && intervals.respond_to?(:write_json_with_causes)
        # Both lists from one read of the timeline's records.
        intervals.write_json_with_causes(io, text.byteslice(marks[0] + 1, marks[1] - marks[0] - 1),
                                         @doc["interval_causes"])
      else
        packed.each_with_index do |key, i|
          io.write(text.byteslice(marks[i - 1] + 1, marks[i] - marks[i - 1] - 1)) if i.positive?
          @doc[key].write_json(io)
        end
      end
      io.write(text.byteslice(marks.last + 1, text.bytesize - marks.last - 1))
      io
    end

    def inspect
      "#<#{self.class} threads=#{@doc['threads'].size} duration_ns=#{duration_ns}>"
    end

    private

    def classic_cache = @cache[:classic]

    def cached(key)
      cache = @cache
      return cache[key] if cache.key?(key)

      cache[key] = yield.freeze
    end

    def deep_freeze(value)
      return value if value.frozen?

      case value
      when Hash then value.each_value { |v| deep_freeze(v) }
      when Array then value.each { |v| deep_freeze(v) }
      end
      value.freeze
    end

    # What the profile views read: the report without its timeline and
    # edges, so a profile of a long run never goes through a million
    # intervals' JSON (the whole report's parse serves them too once made).
    PROFILE_RENDERS = %w[pprof collapsed speedscope top].freeze
    NOT_PROFILE_KEYS = %w[intervals interval_causes edges blocked_edges blame].freeze

    def parsed_for(view, checked)
      return @cache[:parsed] if @cache.key?(:parsed)

      # Stacks ranked by root cause read the timeline.
      if PROFILE_RENDERS.include?(view) && checked[:blame].to_s != "root"
        return cached(:parsed_profile) do
          Rperf.__send__(:_c_parse_report, JSON.generate(@doc.except(*NOT_PROFILE_KEYS)))
        end
      end
      cached(:parsed) { Rperf.__send__(:_c_parse_report, to_json) }
    end

    # thread: or label: (one of them) as the analysis module's subject.
    def critical_path_subject(thread, label)
      if thread.nil? == label.nil?
        raise ArgumentError, "critical_path: give thread: (a seq or a name) or label: ({ key => value }), one of them"
      end
      return RenderOptions.check_thread(thread) if thread

      pairs = label.is_a?(Hash) ? label.map { |k, v| "#{k}=#{v}" } : [label]
      unless pairs.size == 1 && pairs[0].is_a?(String) && pairs[0].index("=").to_i.positive?
        raise ArgumentError, "label: #{label.inspect} is invalid; expected one pair: { key => value } or \"key=value\""
      end

      "label=#{pairs[0].gsub("\0", "\\x00")}"
    end

    # extra: options set by the methods above (not the caller's keywords).
    def render(view, opts, **extra)
      unless Rperf::HAVE_ANALYSIS
        raise UnsupportedError, "rperf: this build has no analysis module (needed for #{view})"
      end

      checked = RenderOptions.normalize(opts).merge(extra)
      parsed = parsed_for(view, checked)
      out = Rperf.__send__(:_c_render, parsed, view, checked)
      BINARY_VIEWS.include?(view) ? out : out.force_encoding(Encoding::UTF_8)
    end

    # A regular file (or a new one) gets what the block writes to the IO it
    # is given through a temporary file in the same directory renamed into
    # place, so a failed write leaves the old file whole; anything else (a
    # device, a FIFO) is written directly and never replaced.
    # A failed write is a RenderError naming the file asked for (its cause
    # is the system's error); the file that was there stays as it was.
    def write_file(path, &writer)
      raise ArgumentError, "#{path.inspect}: a file name cannot contain a NUL byte" if path.include?("\0")
      return File.open(path, "wb", &writer) if File.exist?(path) && !File.file?(path)

      tmp = temporary_name(path, ".tmp#{Process.pid}.#{Thread.current.object_id}")
      begin
        File.open(tmp, "wb", &writer)
        File.rename(tmp, path)
      ensure
        File.unlink(tmp) if File.exist?(tmp)
      end
    rescue SystemCallError, IOError => e
      raise RenderError, "rperf: cannot write #{path}: #{e.message.sub(/ @ .*/, "")}"
    end

    NAME_MAX = 255 # bytes of one file name (Linux)

    # path's name with suffix, the name cut (between characters) so that the
    # whole fits NAME_MAX: a name of 255 bytes is valid, and so is its temporary.
    def temporary_name(path, suffix)
      dir, name = File.split(path)
      keep = NAME_MAX - suffix.bytesize
      if name.bytesize > keep
        keep -= 1 while keep.positive? && (name.getbyte(keep) & 0xC0) == 0x80 # inside a character
        name = name.byteslice(0, keep)
      end
      File.join(dir, name + suffix)
    end
  end
end
