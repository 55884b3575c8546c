; queue_ptr.ll: code object v4 passes the queue pointer in user SGPRs (v5 moved it to the hidden
; arguments), so reading it sets ENABLE_SGPR_QUEUE_PTR, which tg refuses.
declare ptr addrspace(4) @llvm.amdgcn.queue.ptr()

define amdgpu_kernel void @queue_reader(ptr addrspace(1) %out) #0 {
  %q = call ptr addrspace(4) @llvm.amdgcn.queue.ptr()
  %v = load i32, ptr addrspace(4) %q
  store i32 %v, ptr addrspace(1) %out
  ret void
}

attributes #0 = { "amdgpu-no-dispatch-ptr" "amdgpu-no-dispatch-id" "amdgpu-no-implicitarg-ptr" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 400}
