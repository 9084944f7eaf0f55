//! `sleeper`: sleeps until killed, whatever its arguments. Tests copy it under another name (`rg`)
//! to stand for a long-running program whose arguments name a server (`rg webpack src/`) when the
//! real one is not installed or would exit at once.

fn main() {
    loop {
        std::thread::park();
    }
}
