//! Integer expressions over a configuration's constants: the tuning constraints of manifests,
//! e.g. `"(BM / WM) * (BN / WN) * 32 == BLOCK_X"`. Comparisons and `&&` / `||` give 1 or 0.
//! The build checks each manifest configuration against them; the tuner drops candidates that
//! break them before compiling anything.

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(&'static str),
}

const OPS: [&str; 17] = ["==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "(", ")", "!", "?"];

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let mut toks = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let c = rest.chars().next().unwrap();
        if c.is_ascii_digit() {
            let end = rest.find(|ch: char| !ch.is_ascii_digit()).unwrap_or(rest.len());
            toks.push(Tok::Num(rest[..end].parse().map_err(|_| format!("number too large in '{text}'"))?));
            rest = &rest[end..];
        } else if c.is_ascii_alphabetic() || c == '_' {
            let end = rest.find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_')).unwrap_or(rest.len());
            toks.push(Tok::Name(rest[..end].to_string()));
            rest = &rest[end..];
        } else if let Some(op) = OPS.iter().find(|op| rest.starts_with(**op) && **op != "?") {
            toks.push(Tok::Op(op));
            rest = &rest[op.len()..];
        } else {
            return Err(format!("unexpected '{c}' in '{text}'"));
        }
        rest = rest.trim_start();
    }
    Ok(toks)
}

fn binding(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "==" | "!=" => 3,
        "<" | "<=" | ">" | ">=" => 4,
        "+" | "-" => 5,
        "*" | "/" | "%" => 6,
        _ => return None,
    })
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    lookup: &'a dyn Fn(&str) -> Option<i64>,
    text: &'a str,
}

impl Parser<'_> {
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn atom(&mut self) -> Result<i64, String> {
        match self.next() {
            Some(Tok::Num(n)) => Ok(n),
            Some(Tok::Name(n)) => (self.lookup)(&n).ok_or_else(|| format!("'{n}' is not a constant of this variant")),
            Some(Tok::Op("-")) => Ok(-self.atom()?),
            Some(Tok::Op("!")) => Ok((self.atom()? == 0) as i64),
            Some(Tok::Op("(")) => {
                let v = self.expr(0)?;
                match self.next() {
                    Some(Tok::Op(")")) => Ok(v),
                    _ => Err(format!("missing ')' in '{}'", self.text)),
                }
            }
            _ => Err(format!("'{}' is not a complete expression", self.text)),
        }
    }

    fn expr(&mut self, min: u8) -> Result<i64, String> {
        let mut lhs = self.atom()?;
        while let Some(Tok::Op(op)) = self.toks.get(self.pos).cloned() {
            let Some(b) = binding(op).filter(|b| *b > min) else { break };
            self.pos += 1;
            let rhs = self.expr(b)?;
            lhs = match op {
                "||" => (lhs != 0 || rhs != 0) as i64,
                "&&" => (lhs != 0 && rhs != 0) as i64,
                "==" => (lhs == rhs) as i64,
                "!=" => (lhs != rhs) as i64,
                "<" => (lhs < rhs) as i64,
                "<=" => (lhs <= rhs) as i64,
                ">" => (lhs > rhs) as i64,
                ">=" => (lhs >= rhs) as i64,
                "+" => lhs.checked_add(rhs).ok_or("overflow")?,
                "-" => lhs.checked_sub(rhs).ok_or("overflow")?,
                "*" => lhs.checked_mul(rhs).ok_or("overflow")?,
                "/" => lhs.checked_div(rhs).ok_or_else(|| format!("division by zero in '{}'", self.text))?,
                _ => lhs.checked_rem(rhs).ok_or_else(|| format!("division by zero in '{}'", self.text))?,
            };
        }
        Ok(lhs)
    }
}

/// Evaluates `text`, looking names up with `lookup`.
pub fn eval(text: &str, lookup: &dyn Fn(&str) -> Option<i64>) -> Result<i64, String> {
    let mut p = Parser { toks: lex(text)?, pos: 0, lookup, text };
    let v = p.expr(0)?;
    if p.pos != p.toks.len() {
        return Err(format!("unexpected text after the expression in '{text}'"));
    }
    Ok(v)
}

/// Ok when every constraint holds; else the first that does not (or cannot be evaluated).
pub fn check_all(constraints: &[impl AsRef<str>], lookup: &dyn Fn(&str) -> Option<i64>) -> Result<(), String> {
    for c in constraints {
        match eval(c.as_ref(), lookup) {
            Ok(0) => return Err(format!("violates {}", c.as_ref())),
            Ok(_) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
