# frozen_string_literal: true

# examples/http_server.rb's worker pool against handlers that raise what a
# `rescue StandardError` does not catch (Exception, ScriptError,
# NoMemoryError): every request is answered 500 and the pool keeps serving.
require "test/unit"
require "socket"
require "stringio"
require "timeout"
require_relative "../../examples/http_server"

class TestExampleHttpErrors < Test::Unit::TestCase
  ERRORS = [Exception, ScriptError, NotImplementedError, NoMemoryError, SecurityError].freeze

  def get(port, path)
    Timeout.timeout(20) { HTTPExample.get(port, path) }
  end

  def test_a_handler_raising_a_non_standard_error_gets_500_and_the_pool_survives
    app = lambda do |env|
      kind = env["PATH_INFO"][%r{\A/raise/(\d+)\z}, 1]
      raise ERRORS[kind.to_i], "handler failed" if kind

      [200, { "content-type" => "text/plain" }, ["ok\n"]]
    end
    workers = 3
    server = HTTPExample::Server.new(app, workers: workers)
    begin
      # More failing requests than workers, every kind, so each worker meets several.
      statuses = capture_stderr do
        (workers * 3).times.map { |i| get(server.port, "/raise/#{i % ERRORS.size}").first }
      end
      assert_equal([500] * (workers * 3), statuses)
      workers.times { assert_equal([200, "ok\n"], get(server.port, "/health")) }
    ensure
      Timeout.timeout(20) { server.stop }
    end
  end

  # A body that raises while it is written: the connection closes, the worker lives on.
  def test_a_body_raising_while_written_does_not_kill_the_worker
    bad_body = Object.new
    def bad_body.each = raise(Exception, "body failed")
    app = ->(env) { env["PATH_INFO"] == "/bad" ? [200, {}, bad_body] : [200, {}, ["ok\n"]] }
    server = HTTPExample::Server.new(app, workers: 1)
    begin
      capture_stderr { 3.times { get(server.port, "/bad") } }
      assert_equal([200, "ok\n"], get(server.port, "/health"))
    ensure
      Timeout.timeout(20) { server.stop }
    end
  end

  private

  def capture_stderr
    old = $stderr
    $stderr = StringIO.new
    yield
  ensure
    $stderr = old
  end
end
